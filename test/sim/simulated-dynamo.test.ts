/**
 * The simulated DynamoDB answers as DynamoDB Local does: the same conditional writes, updates,
 * queries (`Limit` before the filter, pages, key conditions) and refusals, played on both and
 * compared. What the relay's stores send is what these cases send.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { SimulatedDynamo } from '../../sim/aws/simulated-dynamo.ts';
import { Random } from '../../sim/kernel/random.ts';
import { VirtualTime } from '../../sim/kernel/virtual-time.ts';
import { dynamoClient, tableNames, uniqueName } from '../support/relay-fixtures.ts';

type Item = Record<string, AttributeValue>;
type Command = { constructor: { name: string }; input: unknown };

/** Sends to DynamoDB Local and to the simulation; answers both outcomes (the output, or the error's name and returned item). */
async function both(simulated: SimulatedDynamo, time: VirtualTime, command: Command): Promise<[unknown, unknown]> {
  const outcome = async (send: () => Promise<unknown>) => {
    try {
      const output = (await send()) as Record<string, unknown>;
      return { Items: output.Items, Item: output.Item, Attributes: output.Attributes, LastEvaluatedKey: output.LastEvaluatedKey, Count: output.Count, ScannedCount: output.ScannedCount };
    } catch (error) {
      return { error: (error as Error).name, Item: (error as { Item?: Item }).Item };
    }
  };
  const local = await outcome(() => dynamoClient().send(command as never));
  const pending = outcome(() => simulated.send(command));
  await time.run(time.now() + 60_000);
  return [local, await pending];
}

function setup() {
  const time = new VirtualTime(1_000);
  const simulated = new SimulatedDynamo({ time, random: new Random(1), tables: [{ name: tableNames.events, stream: false }], maxAttempts: 1 });
  return { time, simulated, pk: uniqueName('simddb'), table: tableNames.events };
}

describe('the simulated DynamoDB, against DynamoDB Local', () => {
  it('refuses a conditional put on a taken key, returning the old item when asked, and updates with SET, ADD, REMOVE, if_not_exists and list_append', async () => {
    const { time, simulated, pk, table } = setup();
    time.install(new Random(2));
    try {
      const key = { pk: { S: pk }, sk: { S: 'a' } };
      const commands: Command[] = [
        new PutItemCommand({ TableName: table, Item: { ...key, n: { N: '1' }, s: { S: 'x' } }, ConditionExpression: 'attribute_not_exists(pk)' }),
        new PutItemCommand({ TableName: table, Item: { ...key, n: { N: '2' } }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        new UpdateItemCommand({ TableName: table, Key: key, UpdateExpression: 'SET #s = :v, l = list_append(if_not_exists(l, :empty), :one) ADD n :two', ConditionExpression: 'n < :ten AND (attribute_not_exists(gone) OR gone = :v)', ExpressionAttributeNames: { '#s': 's' }, ExpressionAttributeValues: { ':v': { S: 'y' }, ':empty': { L: [] }, ':one': { L: [{ S: 'e' }] }, ':two': { N: '2' }, ':ten': { N: '10' } }, ReturnValues: 'ALL_NEW' }),
        new UpdateItemCommand({ TableName: table, Key: key, UpdateExpression: 'SET n = n + :one REMOVE #s', ConditionExpression: 'size(l) = :size AND n IN (:a, :b)', ExpressionAttributeNames: { '#s': 's' }, ExpressionAttributeValues: { ':one': { N: '1' }, ':size': { N: '1' }, ':a': { N: '3' }, ':b': { N: '4' } }, ReturnValues: 'UPDATED_OLD' }),
        new UpdateItemCommand({ TableName: table, Key: key, UpdateExpression: 'SET n = :zero', ConditionExpression: 'NOT (n BETWEEN :low AND :high)', ExpressionAttributeValues: { ':zero': { N: '0' }, ':low': { N: '1' }, ':high': { N: '9' } }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true, ProjectionExpression: 'n, l' }),
        new DeleteItemCommand({ TableName: table, Key: key, ConditionExpression: 'begins_with(sk, :a)', ExpressionAttributeValues: { ':a': { S: 'a' } }, ReturnValues: 'ALL_OLD' }),
        new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }),
      ];
      for (const command of commands) {
        const [local, simulatedOutcome] = await both(simulated, time, command);
        expect(simulatedOutcome).toEqual(local);
      }
    } finally {
      time.uninstall();
    }
  });

  it('applies a query limit before its filter, pages with LastEvaluatedKey and orders sort keys as DynamoDB does', async () => {
    const { time, simulated, pk, table } = setup();
    time.install(new Random(3));
    try {
      for (const [index, sk] of ['P#1#b', 'P#1#a', 'P#2#a', 'P#3#b', 'P#10#a', 'O#x', 'P#\u00e9'].entries()) {
        await both(simulated, time, new PutItemCommand({ TableName: table, Item: { pk: { S: pk }, sk: { S: sk }, who: { S: sk.endsWith('a') ? 'a' : 'b' }, i: { N: String(index) } } }));
      }
      const query = (extra: Record<string, unknown>) =>
        new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high', ExpressionAttributeValues: { ':pk': { S: pk }, ':low': { S: 'P#' }, ':high': { S: 'P#\uffff' }, ':who': { S: 'a' } }, ConsistentRead: true, ...extra });
      const first = await both(simulated, time, query({ Limit: 2, FilterExpression: 'who = :who' }));
      expect(first[1]).toEqual(first[0]);
      const lastKey = (first[0] as { LastEvaluatedKey?: Item }).LastEvaluatedKey;
      expect(lastKey).toBeDefined();
      const second = await both(simulated, time, query({ Limit: 3, FilterExpression: 'who = :who', ExclusiveStartKey: lastKey }));
      expect(second[1]).toEqual(second[0]);
      const backwards = await both(simulated, time, query({ ScanIndexForward: false, ProjectionExpression: 'sk' }));
      expect(backwards[1]).toEqual(backwards[0]);
      const prefix = await both(simulated, time, new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': { S: pk }, ':p': { S: 'P#1' } }, ConsistentRead: true }));
      expect(prefix[1]).toEqual(prefix[0]);
    } finally {
      time.uninstall();
    }
  });
});
