import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoDbClientConfig {
  region: string;
  /** Set for DynamoDB Local, which takes any credentials; unset on AWS. */
  dynamodbEndpoint?: string | undefined;
}

/** A DynamoDB client for AWS, or for DynamoDB Local when an endpoint is given. */
export function dynamoDbClient(config: DynamoDbClientConfig): DynamoDBClient {
  return new DynamoDBClient({
    region: config.region,
    ...(config.dynamodbEndpoint
      ? { endpoint: config.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
}

/** A DynamoDB Streams client for AWS, or for the stream of DynamoDB Local (same endpoint) when one is given. */
export function dynamoDbStreamsClient(config: DynamoDbClientConfig): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({
    region: config.region,
    ...(config.dynamodbEndpoint
      ? { endpoint: config.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
}

/** The document client the adapters use: plain JS values in and out; `undefined` fields are left out. */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
