import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mintTokenSecret } from '../../src/auth/token-secret.ts';
import { createLogger } from '../../src/observability/logger.ts';

/**
 * The logger's own guarantees, on the lines it actually writes to stdout: correlation fields
 * from `child`, the Lambda context once handed over, errors with name, message and stack,
 * and no token in any form wherever a caller put it (AEP-0003 §8.1).
 */
describe('logger', () => {
  let lines: string[];
  let restore: () => void;
  beforeEach(() => {
    lines = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    restore = () => {
      process.stdout.write = write;
    };
  });
  afterEach(() => restore());
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, any>);

  it('writes one JSON line per entry with the service, bound correlation fields and the Lambda context', () => {
    const logger = createLogger({ service: 'aep-relay-test' });
    logger.powertools.addContext({ functionName: 'aep-relay-test', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:0:function:aep-relay-test', memoryLimitInMB: '512', awsRequestId: 'request-1' } as never);
    logger.child({ requestId: 'request-1', connectionId: 'connection-1' }).warn('connection refused', { reason: 'limit-exceeded' });
    logger.debug('below the default level');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('}\n')).toBe(true);
    expect(entries()[0]).toMatchObject({ level: 'WARN', message: 'connection refused', service: 'aep-relay-test', function_request_id: 'request-1', requestId: 'request-1', connectionId: 'connection-1', reason: 'limit-exceeded' });
  });

  it('serialises errors with name, message, stack and cause', () => {
    createLogger({ service: 'aep-relay-test' }).error('append failed', { error: new RangeError('outer', { cause: new Error('inner') }) });
    const [entry] = entries();
    expect(entry?.error).toMatchObject({ name: 'RangeError', message: 'outer', cause: { name: 'Error', message: 'inner' } });
    expect(entry?.error.stack).toContain('RangeError: outer');
  });

  it('never writes a token, whichever field or text carries it', () => {
    const token = mintTokenSecret();
    const other = 'opaque-dev-token-0123456789';
    const logger = createLogger({ service: 'aep-relay-test' }).child({ authorization: `Bearer ${other}` });
    logger.info('request', { headers: { authorization: `Bearer ${token}`, 'x-aep-authorization': `Bearer ${other}` }, access_token: other, tokenId: 'tok_public' });
    logger.info(`GET /stream?live=0&access_token=${encodeURIComponent(other)}&from=all`);
    logger.info('quoted', { url: `https://relay.example/stream?access_token%3D${other}`, note: `sent Authorization: Bearer ${other}` });
    logger.error('stream failed', { error: new Error(`refused ${token}`, { cause: new Error(`Bearer ${other}`) }) });
    const output = lines.join('');
    expect(lines).toHaveLength(4);
    for (const secret of [token, other]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(encodeURIComponent(secret));
    }
    expect(entries()[0]).toMatchObject({ tokenId: 'tok_public', headers: { authorization: '[redacted]' } });
    // Prose about tokens is left alone.
    logger.warn('a valid bearer token is required');
    expect(entries()[4]?.message).toBe('a valid bearer token is required');
  });
});
