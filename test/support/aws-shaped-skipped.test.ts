// jest.config.js runs this instead of the AWS-shaped HTTP suites when Java is missing.
test.skip('AWS-shaped e2e suites skipped: Java is not installed (DynamoDB Local needs Java 17 or later on the PATH)', () => undefined);
