/**
 * Sends Web Push messages: the `web-push` library encrypts the payload to the subscription's
 * keys (RFC 8291, `aes128gcm`) and signs the VAPID header (RFC 8292); the request itself goes
 * out through the bridges' guarded poster (`http-sink-poster.ts`), so a push endpoint reaches
 * only addresses a sink could, within the lane's timeout. The message is signed with the key the
 * browser subscribed under (the current one, or during a rotation the previous one). Reasons
 * name a status, never the endpoint (a capability URL) or a key.
 */
import webpush from 'web-push';
import type { PushOutcome, PushRequest, PushTransport } from '../relay/push/push-transport-port.ts';
import type { HttpPoster } from './http-sink-poster.ts';
import type { VapidKeyPair } from './vapid-keys.ts';

export interface WebPushSenderOptions {
  /** Current first. */
  keys: readonly VapidKeyPair[];
  /** The VAPID `sub` claim. */
  subject: string;
  post: HttpPoster;
}

export function webPushSender(options: WebPushSenderOptions): PushTransport {
  const publicKeys = options.keys.map((pair) => pair.publicKey);
  return {
    vapidKeys: () => publicKeys,
    async send(request: PushRequest, timeoutMs: number): Promise<PushOutcome> {
      const pair = options.keys.find((candidate) => candidate.publicKey === request.subscription.vapidKey);
      // Subscribed under a key the relay no longer holds: the push service would refuse every message.
      if (pair === undefined) return { ok: false, gone: true, reason: 'subscribed under a VAPID key this relay no longer signs with' };
      const details = webpush.generateRequestDetails({ endpoint: request.subscription.endpoint, keys: request.subscription.keys }, request.payload, {
        vapidDetails: { subject: options.subject, publicKey: pair.publicKey, privateKey: pair.privateKey },
        TTL: request.ttlSeconds,
        urgency: request.urgency,
        topic: request.topic,
        contentEncoding: 'aes128gcm',
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(details.headers)) if (name.toLowerCase() !== 'content-length') headers[name] = String(value);
      const body = details.body ?? new Uint8Array();
      const outcome = await options.post({ url: details.endpoint, headers, body }, timeoutMs);
      if (outcome.ok) return outcome;
      // RFC 8030 §7.3 (410), and 404 as push services answer for an unknown subscription.
      if (outcome.status === 404 || outcome.status === 410) return { ok: false, gone: true, reason: outcome.reason };
      return { ok: false, retryable: outcome.retryable, reason: outcome.reason };
    },
  };
}
