/**
 * "Notify me": the console as an installed web app receives Web Push notifications for
 * attention requests. Registers the service worker (`public/sw.js`, scope `/console/`), asks the
 * browser's permission, subscribes with the relay's VAPID key (`GET /push/key`) and registers the
 * subscription with the relay (`POST /push/subscriptions`), which keeps it for this token.
 */
import type { RelayClient } from './relay-client.ts';

export type NotifyState = 'unsupported' | 'off' | 'denied' | 'on';

/** Registers the service worker early, so the app is installable; a browser without one is left alone. */
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator)) return;
  void navigator.serviceWorker.register('./sw.js', { scope: './' }).catch(() => undefined);
}

export function notifySupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

export async function currentNotifyState(): Promise<NotifyState> {
  if (!notifySupported()) return 'unsupported';
  if (Notification.permission === 'denied') return 'denied';
  const registration = await navigator.serviceWorker.getRegistration('./');
  const subscription = await registration?.pushManager.getSubscription();
  return subscription === null || subscription === undefined || Notification.permission !== 'granted' ? 'off' : 'on';
}

/** Asks permission, subscribes, and registers the subscription; answers the state reached, or a problem in words. */
export async function turnOnNotifications(client: RelayClient): Promise<{ state: NotifyState; problem?: string }> {
  if (!notifySupported()) return { state: 'unsupported', problem: 'This browser cannot receive notifications from a web app (on iPhone, add the console to the Home Screen first).' };
  const key = await client.json<{ vapidKey: string }>('GET', '/push/key');
  if (!key.ok) return { state: 'off', problem: key.problem.detail };
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return { state: permission === 'denied' ? 'denied' : 'off', problem: 'Notifications were not allowed.' };
  const registration = await navigator.serviceWorker.ready;
  const applicationServerKey = bytesOf(key.value.vapidKey);
  let subscription = await registration.pushManager.getSubscription();
  // Made under another key (the relay's was rotated): subscribe again under the current one.
  if (subscription !== null && !sameKey(subscription.options.applicationServerKey, applicationServerKey)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey });
  const stored = await client.json('POST', '/push/subscriptions', { ...subscription.toJSON(), vapidKey: key.value.vapidKey, label: deviceLabel() });
  if (!stored.ok) return { state: 'off', problem: stored.problem.detail };
  return { state: 'on' };
}

function bytesOf(base64url: string): Uint8Array<ArrayBuffer> {
  const text = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(new ArrayBuffer(text.length));
  for (let index = 0; index < text.length; index += 1) bytes[index] = text.charCodeAt(index);
  return bytes;
}

function sameKey(held: ArrayBuffer | null, wanted: Uint8Array): boolean {
  if (held === null) return false;
  const bytes = new Uint8Array(held);
  return bytes.length === wanted.length && bytes.every((byte, index) => byte === wanted[index]);
}

/** A label the person recognises in a listing; no identifier of the device. */
function deviceLabel(): string {
  const standalone = matchMedia('(display-mode: standalone)').matches;
  return `${/Mobi|Android|iPhone|iPad/.test(navigator.userAgent) ? 'phone' : 'desktop'} browser${standalone ? ' (installed)' : ''}`;
}
