/**
 * Requests to the relay on the console's own origin. The token rides the `Authorization`
 * header; only the two browser APIs that cannot set headers (EventSource, WebSocket) carry
 * it as `access_token` in a URL the user never sees (AEP-0003 §8.1).
 */
export interface RelayProblem {
  status: number;
  /** The relay's error code (`invalid-request`, `unauthorized`, ...), when it sent one. */
  code?: string;
  detail: string;
}

export type RelayResult<T> = { ok: true; value: T; response: Response } | { ok: false; problem: RelayProblem };

export class RelayClient {
  constructor(
    /** Read by the tail's stream request (a header, never a URL). */
    readonly token: string,
    readonly origin: string = location.origin,
  ) {}

  async json<T>(method: string, path: string, body?: unknown): Promise<RelayResult<T>> {
    const result = await this.request(method, path, body);
    if (!result.ok) return result;
    const text = await result.response.text();
    return { ok: true, value: (text === '' ? undefined : JSON.parse(text)) as T, response: result.response };
  }

  /** A GET asking for one of `accept`'s media types: the answer's text and content type, for a caller that reads either. */
  async negotiated(path: string, accept: string): Promise<RelayResult<{ text: string; contentType: string }>> {
    const result = await this.request('GET', path, undefined, { accept });
    if (!result.ok) return result;
    const text = await result.response.text();
    return { ok: true, value: { text, contentType: (result.response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '' }, response: result.response };
  }

  /** The EventSource / WebSocket URL for a path, with the token in `access_token`. */
  urlWithToken(path: string, params: Record<string, string>, scheme: 'http' | 'ws'): string {
    const url = new URL(path, this.origin);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    url.searchParams.set('access_token', this.token);
    if (scheme === 'ws') url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return url.toString();
  }

  private async request(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<{ ok: true; response: Response } | { ok: false; problem: RelayProblem }> {
    const headers: Record<string, string> = { ...extraHeaders, authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(new URL(path, this.origin), { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), cache: 'no-store' });
    } catch {
      return { ok: false, problem: { status: 0, detail: 'the relay could not be reached' } };
    }
    if (response.ok) return { ok: true, response };
    return { ok: false, problem: await problemOf(response) };
  }
}

async function problemOf(response: Response): Promise<RelayProblem> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; code?: unknown; detail?: unknown; message?: unknown };
    const code = typeof body.error === 'string' ? body.error : typeof body.code === 'string' ? body.code : undefined;
    const detail = typeof body.detail === 'string' ? body.detail : typeof body.message === 'string' ? body.message : response.statusText;
    return { status: response.status, ...(code === undefined ? {} : { code }), detail };
  } catch {
    return { status: response.status, detail: response.statusText || `HTTP ${response.status}` };
  }
}
