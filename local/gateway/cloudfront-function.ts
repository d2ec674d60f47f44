/**
 * Runs a CloudFront Function (viewer request, JavaScript runtime 2.0) locally: the very source
 * the stack deploys (infra/constructs/edge-functions.ts), compiled in its own V8 context, fed
 * the event shape CloudFront builds ("CloudFront Functions event structure") and its result
 * applied back to the Node request.
 */
import type { IncomingMessage } from 'node:http';
import { Script, createContext } from 'node:vm';

interface FieldValue {
  value: string;
  multiValue?: Array<{ value: string }>;
}

/** The `request` member of a viewer-request event. */
export interface CloudFrontRequest {
  method: string;
  uri: string;
  querystring: Record<string, FieldValue>;
  headers: Record<string, FieldValue>;
  cookies: Record<string, FieldValue>;
}

/** A function may answer the viewer itself instead of returning the request. */
export interface CloudFrontResponse {
  statusCode: number;
  statusDescription?: string;
  headers?: Record<string, FieldValue>;
  body?: string | { data: string; encoding?: string };
}

export type ViewerRequestHandler = (event: unknown) => CloudFrontRequest | CloudFrontResponse;

/** Compiles a function's source once; each call runs it on a fresh event. */
export function compileViewerRequestFunction(source: string): ViewerRequestHandler {
  const context = createContext({});
  const handler = new Script(`${source}\n;handler;`).runInContext(context) as unknown;
  if (typeof handler !== 'function') throw new Error('a CloudFront Function must define handler(event)');
  return handler as ViewerRequestHandler;
}

/** The viewer-request event for a Node request (header names lowercased, as CloudFront presents them). */
export function viewerRequestEvent(request: IncomingMessage, url: URL): { version: string; context: Record<string, string>; viewer: { ip: string }; request: CloudFrontRequest } {
  const headers: Record<string, FieldValue> = {};
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    addValue(headers, (request.rawHeaders[index] as string).toLowerCase(), request.rawHeaders[index + 1] as string);
  }
  const querystring: Record<string, FieldValue> = {};
  // Names and values stay as the viewer encoded them.
  for (const pair of url.search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    addValue(querystring, equals === -1 ? pair : pair.slice(0, equals), equals === -1 ? '' : pair.slice(equals + 1));
  }
  return {
    version: '1.0',
    context: { eventType: 'viewer-request', distributionDomainName: headers.host?.value ?? 'localhost', distributionId: 'LOCAL', requestId: 'local' },
    viewer: { ip: request.socket.remoteAddress ?? '127.0.0.1' },
    request: { method: request.method ?? 'GET', uri: url.pathname, querystring, headers, cookies: {} },
  };
}

export function isResponse(result: CloudFrontRequest | CloudFrontResponse): result is CloudFrontResponse {
  return typeof (result as CloudFrontResponse).statusCode === 'number';
}

/** Writes the function's request back: path and query on the URL, headers on the Node request. */
export function applyRequest(request: IncomingMessage, result: CloudFrontRequest): URL {
  const search = Object.entries(result.querystring)
    .flatMap(([name, field]) => valuesOf(field).map((value) => (value === '' ? name : `${name}=${value}`)))
    .join('&');
  const url = new URL(`${result.uri}${search === '' ? '' : `?${search}`}`, `http://${request.headers.host ?? 'localhost'}`);
  replaceHeaders(request, result.headers);
  request.url = `${url.pathname}${url.search}`;
  return url;
}

/** Replaces the request's headers (both views Node keeps), keeping the viewer's spelling of names it did not change. */
export function replaceHeaders(request: IncomingMessage, headers: Record<string, FieldValue>): void {
  const spelling = new Map<string, string>();
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] as string;
    spelling.set(name.toLowerCase(), name);
  }
  const rawHeaders: string[] = [];
  const parsed: Record<string, string> = {};
  for (const [name, field] of Object.entries(headers)) {
    const values = valuesOf(field);
    for (const value of values) rawHeaders.push(spelling.get(name) ?? name, value);
    parsed[name] = values.join(', ');
  }
  request.rawHeaders.splice(0, request.rawHeaders.length, ...rawHeaders);
  for (const name of Object.keys(request.headers)) delete request.headers[name];
  Object.assign(request.headers, parsed);
}

function addValue(fields: Record<string, FieldValue>, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) {
    fields[name] = { value };
    return;
  }
  existing.multiValue ??= [{ value: existing.value }];
  existing.multiValue.push({ value });
}

function valuesOf(field: FieldValue): string[] {
  return field.multiValue === undefined ? [field.value] : field.multiValue.map((entry) => entry.value);
}
