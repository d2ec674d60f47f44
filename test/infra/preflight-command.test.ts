/**
 * `npm run preflight` as an operator runs it: the real command (bin/preflight.ts) and the real
 * Lambda client, pointed by `AWS_ENDPOINT_URL_LAMBDA` at a local HTTP stand-in that answers
 * Lambda's REST API (GetAccountSettings `GET /2016-08-19/account-settings`, ListFunctions
 * `GET /2015-03-31/functions/`, paged with `Marker`/`NextMarker`, GetFunctionConcurrency
 * `GET /2019-09-30/functions/{name}/concurrency`) with a new account's quotas, or an upgrade's.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

interface StubAccount {
  /** Answer every call with 403 AccessDeniedException, as for credentials without the permissions. */
  denied?: boolean;
  concurrentExecutions: number;
  unreservedConcurrentExecutions: number;
  /** Function name to its reserved concurrency (undefined: none). */
  functions: Record<string, number | undefined>;
}

let account: StubAccount;
const requests: Array<{ method: string; path: string; signed: boolean }> = [];
let server: Server;
let endpoint: string;

function answer(method: string, url: URL): { status: number; body: unknown } {
  if (account.denied === true) return { status: 403, body: { Type: 'User', message: 'User is not authorized to perform: lambda:GetAccountSettings' } };
  if (method === 'GET' && url.pathname.replace(/\/$/, '') === '/2016-08-19/account-settings') {
    return {
      status: 200,
      body: {
        AccountLimit: { ConcurrentExecutions: account.concurrentExecutions, UnreservedConcurrentExecutions: account.unreservedConcurrentExecutions, CodeSizeUnzipped: 262144000, CodeSizeZipped: 52428800, TotalCodeSize: 80530636800 },
        AccountUsage: { FunctionCount: Object.keys(account.functions).length, TotalCodeSize: 0 },
      },
    };
  }
  if (method === 'GET' && url.pathname.replace(/\/$/, '') === '/2015-03-31/functions') {
    // Two functions a page, so the command has to follow NextMarker.
    const names = Object.keys(account.functions);
    const start = Number(url.searchParams.get('Marker') ?? '0');
    const page = names.slice(start, start + 2).map((FunctionName) => ({ FunctionName }));
    return { status: 200, body: { Functions: page, ...(start + 2 < names.length ? { NextMarker: String(start + 2) } : {}) } };
  }
  const concurrency = /^\/2019-09-30\/functions\/([^/]+)\/concurrency$/.exec(url.pathname);
  if (method === 'GET' && concurrency !== null) {
    const name = decodeURIComponent(concurrency[1]!);
    if (!Object.hasOwn(account.functions, name)) return { status: 404, body: { Type: 'User', message: `Function not found: ${name}` } };
    const reserved = account.functions[name];
    return { status: 200, body: reserved === undefined ? {} : { ReservedConcurrentExecutions: reserved } };
  }
  return { status: 404, body: { message: `no route ${method} ${url.pathname}` } };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stub');
    requests.push({ method: request.method ?? '', path: url.pathname, signed: /^AWS4-HMAC-SHA256 Credential=AKIDPREFLIGHT\//.test(request.headers.authorization ?? '') });
    const { status, body } = answer(request.method ?? '', url);
    const text = JSON.stringify(body);
    const errorType = { 403: 'AccessDeniedException', 404: 'ResourceNotFoundException' }[status];
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }) });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Runs the command with only the stand-in's endpoint and dummy credentials in its AWS environment. */
async function preflight(context: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_') && !key.startsWith('CDK_')));
  Object.assign(env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDPREFLIGHT',
    AWS_SECRET_ACCESS_KEY: 'preflight-secret',
    AWS_ENDPOINT_URL_LAMBDA: endpoint,
    AWS_CONFIG_FILE: join(ROOT, 'no-such-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(ROOT, 'no-such-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  const args = [join(ROOT, 'bin', 'preflight.ts'), ...context.flatMap((pair) => ['-c', pair])];
  try {
    const { stdout, stderr } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), args, { cwd: ROOT, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run preflight', () => {
  it("passes the defaults on a new account's 10 executions, saying what the configured streams need", async () => {
    account = { concurrentExecutions: 10, unreservedConcurrentExecutions: 10, functions: {} };
    requests.length = 0;
    const { code, stdout } = await preflight([]);
    expect(code).toBe(0);
    expect(stdout).toContain('preflight for AepRelay-dev in us-east-1');
    expect(stdout).toMatch(/Lambda concurrent executions quota\s+10\n/);
    expect(stdout).toContain('OK    reservations: this deploy reserves no concurrency');
    expect(stdout).toContain('WARN  capacity: 180 live streams (-c liveStreams) and 5 sink retries at once');
    expect(stdout).toContain('Request a Lambda concurrent executions quota of at least 285 in us-east-1 (Service Quotas code L-B99A9384)');
    expect(stdout).toContain('the deploy can go ahead');
    // No function of the stage: a first deploy, which should go without deletion protection, and
    // whose CloudFront verification no read can show.
    expect(stdout).toMatch(/functions of this stack now\s+0 \(a first deploy\)\n/);
    expect(stdout).toContain('WARN  first deploy: no function of AepRelay-dev in us-east-1');
    expect(stdout).toContain('Deploy this first time with -c deletionProtection=false');
    expect(stdout).toContain('NOTE  cloudfront: not checked: whether AWS lets this account create CloudFront distributions');
    // It read the account settings and listed the functions, signed with the credentials it was given.
    expect(requests.map((request) => `${request.method} ${request.path.replace(/\/$/, '')}`)).toEqual(['GET /2016-08-19/account-settings', 'GET /2015-03-31/functions']);
    expect(requests.every((request) => request.signed)).toBe(true);
  }, 90_000);

  it('fails, naming the quota to request, when the configured reservation would fail the deploy', async () => {
    account = { concurrentExecutions: 10, unreservedConcurrentExecutions: 10, functions: {} };
    const { code, stdout } = await preflight(['stage=prod', 'streamConcurrency=200']);
    expect(code).toBe(1);
    expect(stdout).toContain('preflight for AepRelay-prod in us-east-1');
    expect(stdout).toContain('FAIL  reservations: this deploy reserves 200 (stream 200 (-c streamConcurrency))');
    expect(stdout).toContain('Request a Lambda concurrent executions quota of at least 300 in us-east-1 (Service Quotas code L-B99A9384)');
    expect(stdout).toContain('the deploy would fail');
  }, 90_000);

  it("counts an upgrade's own reservations (found across pages of functions) as free again, and only its stage's", async () => {
    account = {
      concurrentExecutions: 400,
      // 250 held by this stage's stream function, 20 by another stage's.
      unreservedConcurrentExecutions: 130,
      functions: {
        'billing-worker': undefined,
        'AepRelay-prod-FunctionsHttp9A1B2C3D-AbCdEf012345': undefined,
        'AepRelay-prod-eu-FunctionsStream5E6F7A8B-ZyXwVu987654': 20,
        'AepRelay-prod-FunctionsStream5E6F7A8B-QrStUv456789': 250,
        'AepRelay-prod-FunctionsSinkretry1C2D3E4F-MnOpQr135790': undefined,
      },
    };
    requests.length = 0;
    const { code, stdout } = await preflight(['stage=prod', 'streamConcurrency=250']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/reserved by this stack now\s+250\n/);
    expect(stdout).toMatch(/reserved by other functions\s+20\n/);
    expect(stdout).toMatch(/unreserved after this deploy\s+130 \(at least 100 must stay\)\n/);
    expect(stdout).toContain('OK    reservations: this deploy reserves 250');
    // Its functions exist, so its create made the distribution: CloudFront is known to work here.
    expect(stdout).toMatch(/functions of this stack now\s+3\n/);
    expect(stdout).toContain('OK    cloudfront: AepRelay-prod exists in us-east-1, and its create made its distribution');
    expect(stdout).not.toContain('first deploy');
    const concurrencyReads = requests.filter((request) => request.path.endsWith('/concurrency')).map((request) => decodeURIComponent(request.path));
    expect(concurrencyReads.sort()).toEqual([
      '/2019-09-30/functions/AepRelay-prod-FunctionsHttp9A1B2C3D-AbCdEf012345/concurrency',
      '/2019-09-30/functions/AepRelay-prod-FunctionsSinkretry1C2D3E4F-MnOpQr135790/concurrency',
      '/2019-09-30/functions/AepRelay-prod-FunctionsStream5E6F7A8B-QrStUv456789/concurrency',
    ]);
    expect(requests.filter((request) => request.path.replace(/\/$/, '') === '/2015-03-31/functions')).toHaveLength(3);
  }, 90_000);

  it('exits 2 naming the permissions it needs when the account cannot be read', async () => {
    account = { denied: true, concurrentExecutions: 0, unreservedConcurrentExecutions: 0, functions: {} };
    const { code, stdout, stderr } = await preflight([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain("preflight could not read the account's Lambda settings: User is not authorized to perform: lambda:GetAccountSettings");
    expect(stderr).toContain('lambda:GetAccountSettings, lambda:ListFunctions and lambda:GetFunctionConcurrency');
  }, 90_000);

  it('refuses context the stack would refuse, before asking the account', async () => {
    requests.length = 0;
    const { code, stderr } = await preflight(['stage=prod_eu']);
    expect(code).toBe(2);
    expect(stderr).toContain('context stage must be letters, digits or -');
    expect(requests).toHaveLength(0);
  }, 90_000);
});
