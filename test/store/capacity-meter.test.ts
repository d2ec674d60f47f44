/**
 * The capacity meter counts what DynamoDB bills for the calls that report no capacity: a read
 * that finds nothing (0.5 RRU eventually consistent, 1 strongly consistent, at least) and a
 * refused conditional write (1 WRU at least), each apart from the units the calls reported.
 */
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { CapacityMeter } from '../../src/store/capacity-meter.ts';
import { dynamoClient, tableNames, uniqueName } from '../support/relay-fixtures.ts';

describe('capacity meter', () => {
  it('counts empty reads at their billed minimum and refused conditional writes as billed calls', async () => {
    const meter = new CapacityMeter();
    const client = dynamoClient(meter);
    const key = { pk: { S: uniqueName('meter') }, sk: { S: 'item' } };
    const TableName = tableNames.tenants;

    await client.send(new GetItemCommand({ TableName, Key: key, ConsistentRead: true }));
    await client.send(new GetItemCommand({ TableName, Key: key }));
    await client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': key.pk }, ConsistentRead: true }));
    // DynamoDB Local already reports a missing item's GetItem at its minimum (1 strongly, 0.5
    // eventually consistent); an empty Query it reports as 0, which the meter bills at 1.
    expect(meter.snapshot()).toMatchObject({ readUnits: 1.5, calls: 3, emptyReads: 1, emptyReadUnits: 1 });

    meter.reset();
    await client.send(new PutItemCommand({ TableName, Item: key, ConditionExpression: 'attribute_not_exists(pk)' }));
    await expect(client.send(new PutItemCommand({ TableName, Item: key, ConditionExpression: 'attribute_not_exists(pk)' }))).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(meter.snapshot()).toMatchObject({ writeUnits: 1, calls: 2, refusedWrites: 1, refusedWriteUnits: 1 });

    meter.reset();
    await client.send(new GetItemCommand({ TableName, Key: key, ConsistentRead: true }));
    expect(meter.snapshot()).toMatchObject({ readUnits: 1, calls: 1, emptyReads: 0, emptyReadUnits: 0 });
  });
});
