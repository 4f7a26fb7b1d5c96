import type { AttributeValue as SdkAttributeValue, _Record as StreamsRecord } from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord, StreamRecord } from 'aws-lambda';

type Image = Record<string, AttributeValue>;

/**
 * One attribute value as the Lambda event's JSON carries it. The SDK hands binary values over as bytes;
 * Lambda delivers them base64-encoded, so a handler decoding `B` or `BS` sees what it would see on AWS.
 */
function toLambdaValue(value: SdkAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaValue) };
  // S, N, SS, NS, NULL and BOOL have the same shape in the SDK and in the event.
  return value as AttributeValue;
}

function toLambdaImage(image: Record<string, SdkAttributeValue>): Image {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaValue(value)]));
}

/**
 * Turns a record from DynamoDB Streams GetRecords into the record a Lambda event source mapping delivers:
 * event version 1.1, the stream ARN as eventSourceARN, ApproximateCreationDateTime in epoch seconds, and
 * only the images the event carries (no OldImage on INSERT, no NewImage on REMOVE).
 */
export function toLambdaStreamRecord(record: StreamsRecord, streamArn: string, awsRegion: string): DynamoDBRecord {
  const source = record.dynamodb ?? {};
  const dynamodb: StreamRecord = {};
  if (source.ApproximateCreationDateTime !== undefined) {
    dynamodb.ApproximateCreationDateTime = Math.floor(source.ApproximateCreationDateTime.getTime() / 1000);
  }
  if (source.Keys !== undefined) dynamodb.Keys = toLambdaImage(source.Keys);
  if (source.NewImage !== undefined) dynamodb.NewImage = toLambdaImage(source.NewImage);
  if (source.OldImage !== undefined) dynamodb.OldImage = toLambdaImage(source.OldImage);
  if (source.SequenceNumber !== undefined) dynamodb.SequenceNumber = source.SequenceNumber;
  if (source.SizeBytes !== undefined) dynamodb.SizeBytes = source.SizeBytes;
  if (source.StreamViewType !== undefined) dynamodb.StreamViewType = source.StreamViewType;

  const lambdaRecord: DynamoDBRecord = {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion,
    eventSourceARN: streamArn,
    dynamodb,
  };
  // Only deletions by TTL carry a user identity.
  if (record.userIdentity) {
    lambdaRecord.userIdentity = { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId };
  }
  return lambdaRecord;
}
