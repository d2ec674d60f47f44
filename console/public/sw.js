/*
 * The console's service worker (scope /console/): shows the relay's Web Push notifications for
 * attention requests and opens the console at the request when one is tapped. It caches nothing
 * and makes no request of its own: the payload, decrypted by the browser, is all it reads
 * (src/relay/push/attention-notification.ts). A follow-up carries the request's tag, so it
 * replaces the request's notification instead of adding one.
 */
/* eslint-env serviceworker */
'use strict';

self.addEventListener('install', () => {
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

/** A URL inside the console's scope, or the console itself: a notification never opens another site. */
function insideScope(url) {
  const scope = self.registration.scope;
  try {
    const resolved = new URL(url, scope).href;
    return resolved.startsWith(scope) ? resolved : scope;
  } catch {
    return scope;
  }
}

self.addEventListener('push', (event) => {
  let message;
  try {
    message = event.data ? event.data.json() : undefined;
  } catch {
    message = undefined;
  }
  if (!message || typeof message.tag !== 'string') return;
  const isRequest = message.kind === 'request';
  event.waitUntil(
    self.registration.showNotification(String(message.title || 'AEP relay'), {
      body: String(message.body || ''),
      tag: message.tag,
      // A request asks again and stays until acted on; its follow-up replaces it quietly.
      renotify: isRequest,
      requireInteraction: isRequest,
      silent: !isRequest,
      icon: 'icon-192.png',
      data: { url: insideScope(message.url || '') },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = insideScope((event.notification.data && event.notification.data.url) || '');
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const open = windows.find((client) => client.url.startsWith(self.registration.scope));
      if (open) {
        await open.navigate(url);
        return open.focus();
      }
      return self.clients.openWindow(url);
    })(),
  );
});
