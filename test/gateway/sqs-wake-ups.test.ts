/**
 * The SQS wake-ups through the real SDK client, against a local HTTP endpoint speaking the SQS
 * JSON protocol: batches of ten, the delay clamped to SQS's 0-900 s, coordinates only in the
 * body, and a refused entry reported as a failure (so the caller's batch is retried).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsWakeUps } from '../../src/gateway/sqs-wake-ups.ts';

interface Received {
  target: string;
  body: { QueueUrl: string; Entries: Array<{ Id: string; MessageBody: string; DelaySeconds: number }> };
}

const received: Received[] = [];
let failNext = false;
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'];
    received.push({ target: String(request.headers['x-amz-target']), body });
    const [first, ...rest] = body.Entries;
    // The SDK checks each accepted message's body digest, as SQS sends it.
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const answer = failNext
      ? { Successful: rest.map((entry) => ({ Id: entry.Id, MessageId: `id-${entry.Id}`, MD5OfMessageBody: md5(entry.MessageBody) })), Failed: [{ Id: first?.Id, Code: 'KmsThrottled', SenderFault: false }] }
      : { Successful: body.Entries.map((entry) => ({ Id: entry.Id, MessageId: `id-${entry.Id}`, MD5OfMessageBody: md5(entry.MessageBody) })), Failed: [] };
    response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
    response.end(JSON.stringify(answer));
  });
});
let client: SQSClient;
const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/retry';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});

afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('SQS wake-ups', () => {
  it('sends batches of ten with the clamped delay and only the coordinates', async () => {
    received.length = 0;
    const wakeUps = Array.from({ length: 23 }, (_unused, index) => ({ tenant: 'acme', letter: `letter-${index}` }));
    await sqsWakeUps(client, queueUrl).wake(wakeUps, 1234.5);
    expect(received.map((call) => call.body.Entries.length)).toEqual([10, 10, 3]);
    expect(received.every((call) => call.target === 'AmazonSQS.SendMessageBatch' && call.body.QueueUrl === queueUrl)).toBe(true);
    const entries = received.flatMap((call) => call.body.Entries);
    expect(new Set(entries.map((entry) => entry.DelaySeconds))).toEqual(new Set([900]));
    expect(entries.map((entry) => JSON.parse(entry.MessageBody))).toEqual(wakeUps);
  });

  it('rounds a fractional delay up and reports a refused entry', async () => {
    received.length = 0;
    await sqsWakeUps(client, queueUrl).wake([{ tenant: 'acme', letter: 'a' }], 0.2);
    expect(received[0]?.body.Entries[0]?.DelaySeconds).toBe(1);
    failNext = true;
    await expect(sqsWakeUps(client, queueUrl).wake([{ tenant: 'acme', letter: 'b' }, { tenant: 'acme', letter: 'c' }], 0)).rejects.toThrow(/refused 1 of 2/);
    failNext = false;
  });
});
