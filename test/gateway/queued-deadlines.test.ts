/**
 * Near connection deadlines on the deadline queue, through the real SDK client against a local
 * HTTP endpoint speaking the SQS JSON protocol: one message per deadline, the deadline itself as
 * the body, held until it is due (whole seconds, rounded down, within SQS's 0-900 s).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DEADLINE_DELAY_SECONDS, deadlineDelaySeconds, queuedDeadlines } from '../../src/gateway/queued-deadlines.ts';
import type { ConnectionDeadline } from '../../src/relay/ports/connection-deadlines.ts';

interface Received {
  target: string;
  body: { QueueUrl: string; MessageBody: string; DelaySeconds: number };
}

const received: Received[] = [];
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'];
    received.push({ target: String(request.headers['x-amz-target']), body });
    // The SDK checks the accepted message's body digest, as SQS sends it.
    const answer = { MessageId: `id-${received.length}`, MD5OfMessageBody: createHash('md5').update(body.MessageBody).digest('hex') };
    response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
    response.end(JSON.stringify(answer));
  });
});
let client: SQSClient;
const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/deadlines';
const NOW = 1_700_000_000_000;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});

afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('queued deadlines', () => {
  it('sends each deadline as one message, held until it is due', async () => {
    received.length = 0;
    const deadline: ConnectionDeadline = { tenant: 'acme', connectionId: 'c1', atMs: NOW + 90_750, reason: 'token-expired' };
    await queuedDeadlines({ client, queueUrl, now: () => NOW }).schedule(deadline);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ target: 'AmazonSQS.SendMessage', body: { QueueUrl: queueUrl, DelaySeconds: 90 } });
    expect(JSON.parse(received[0]!.body.MessageBody)).toEqual(deadline);
  });

  it.each([
    ['rounds down, so the message is never late', NOW + 1_999, 1],
    ['sends a deadline already past at once', NOW - 5_000, 0],
    ['holds at most SQS\'s 15 minutes', NOW + 3_600_000, MAX_DEADLINE_DELAY_SECONDS],
  ])('%s', (_case, atMs, seconds) => {
    expect(deadlineDelaySeconds(atMs, NOW)).toBe(seconds);
  });
});
