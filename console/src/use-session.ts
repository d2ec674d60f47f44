/** Re-renders a view whenever the signed-in session changes. */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from './console-session.ts';

export function useSessionVersion(session: ConsoleSession): number {
  const [version, setVersion] = useState(0);
  useEffect(() => session.onChange(() => setVersion((value) => value + 1)), [session]);
  return version;
}

/**
 * The view named in the location hash (`#/inbox`), and what it is focused on (`#/inbox/{request
 * id}`, where a notification leads); the hash never holds anything else.
 */
export function useHashRoute(fallback: string): string {
  const read = () => location.hash.replace(/^#\/?/, '') || fallback;
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
