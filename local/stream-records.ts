/**
 * Turns DynamoDB Streams `GetRecords` records into the records Lambda hands a function in a
 * `DynamoDBStreamEvent` (the JSON form: `ApproximateCreationDateTime` in epoch seconds,
 * binary attributes in base64), and applies the fan-out function's filter criteria.
 */
import type { _Record as StreamsRecord, AttributeValue as StreamsAttributeValue } from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord, StreamRecord } from 'aws-lambda';

export function lambdaRecordOf(record: StreamsRecord, streamArn: string): DynamoDBRecord {
  const source = record.dynamodb;
  const dynamodb: StreamRecord = {};
  if (source?.ApproximateCreationDateTime !== undefined) dynamodb.ApproximateCreationDateTime = Math.floor(source.ApproximateCreationDateTime.getTime() / 1000);
  if (source?.Keys !== undefined) dynamodb.Keys = imageOf(source.Keys);
  if (source?.NewImage !== undefined) dynamodb.NewImage = imageOf(source.NewImage);
  if (source?.OldImage !== undefined) dynamodb.OldImage = imageOf(source.OldImage);
  if (source?.SequenceNumber !== undefined) dynamodb.SequenceNumber = source.SequenceNumber;
  if (source?.SizeBytes !== undefined) dynamodb.SizeBytes = source.SizeBytes;
  if (source?.StreamViewType !== undefined) dynamodb.StreamViewType = source.StreamViewType;
  return {
    ...(record.eventID === undefined ? {} : { eventID: record.eventID }),
    ...(record.eventName === undefined ? {} : { eventName: record.eventName }),
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: record.eventSource ?? 'aws:dynamodb',
    ...(record.awsRegion === undefined ? {} : { awsRegion: record.awsRegion }),
    dynamodb,
    eventSourceARN: streamArn,
    // Present only on deletions by TTL, as in the cloud.
    ...(record.userIdentity === undefined ? {} : { userIdentity: record.userIdentity }),
  };
}

function imageOf(image: Record<string, StreamsAttributeValue>): Record<string, AttributeValue> {
  const converted: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(image)) converted[name] = attributeOf(value);
  return converted;
}

function attributeOf(value: StreamsAttributeValue): AttributeValue {
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  if (value.NULL !== undefined) return { NULL: value.NULL };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  if (value.BS !== undefined) return { BS: value.BS.map((item) => Buffer.from(item).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(attributeOf) };
  if (value.M !== undefined) return { M: imageOf(value.M) };
  throw new Error(`unknown attribute value type: ${Object.keys(value).join(',')}`);
}

/** Item kinds the fan-out function receives (`kind` attribute of the events table). */
export const FANOUT_KINDS: readonly string[] = ['event', 'redelivery'];

/**
 * The fan-out event source mapping's filter criteria, which the CDK stack declares as two
 * patterns (a record passes when it matches either):
 * `{ eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: ['event', 'redelivery'] } } } }`
 * and, for the wake-up of a session holding events (`session-order-store.ts`),
 * `{ eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { kind: { S: ['order'] }, wakeAt: { N: [{ exists: true }] } } } }`.
 * Lambda drops records that match no filter and never invokes the function with them
 * ("Control which events Lambda sends to your function").
 */
export function passesFanoutFilter(record: DynamoDBRecord): boolean {
  const image = record.dynamodb?.NewImage;
  const kind = image?.kind?.S;
  if (record.eventName === 'INSERT' && kind !== undefined && FANOUT_KINDS.includes(kind)) return true;
  return (record.eventName === 'INSERT' || record.eventName === 'MODIFY') && kind === 'order' && image?.wakeAt?.N !== undefined;
}

/**
 * The bridges' event source mapping's filter criteria (`infra/constructs/bridges.ts`): inserted
 * events only. Redelivery markers are duplicates the sinks already had with their first storing.
 */
export function passesBridgeFilter(record: DynamoDBRecord): boolean {
  return record.eventName === 'INSERT' && record.dynamodb?.NewImage?.kind?.S === 'event';
}
