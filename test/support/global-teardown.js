/** Stops the DynamoDB Local that global-setup.js started. */
export default async function globalTeardown() {
  await globalThis.dynamoDbLocal?.stop();
}
