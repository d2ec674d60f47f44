/**
 * POSTs bridge requests (webhooks, OTLP/HTTP) with the runtime's `fetch`. Classifies the
 * answer for the retry loop: no answer, a timeout, 408, 429 and 5xx are worth retrying; any
 * other non-2xx is the receiver refusing the content. Reasons never carry request headers
 * (they hold the tenant's credentials) and at most a short excerpt of the response.
 */
import type { HttpDelivery, SendOutcome } from '../relay/ports/sink-transport.ts';

/** How long one attempt may take before it counts as no answer. */
export const SINK_REQUEST_TIMEOUT_MS = 10_000;

export async function postHttp(delivery: HttpDelivery, timeoutMs = SINK_REQUEST_TIMEOUT_MS): Promise<SendOutcome> {
  let response: Response;
  try {
    response = await fetch(delivery.url, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    return { ok: false, retryable: true, reason: name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `could not reach the receiver (${name})` };
  }
  // The body is read (and dropped) so the connection can be reused.
  const excerpt = (await response.text().catch(() => '')).slice(0, 120).replace(/\s+/g, ' ');
  if (response.ok) return { ok: true };
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  return { ok: false, retryable, reason: `the receiver answered ${response.status}${excerpt === '' ? '' : `: ${excerpt}`}` };
}
