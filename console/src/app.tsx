/**
 * The console's shell: sign-in until a token is held, then the navigation and one view at a
 * time. Views are named in the location hash only, so a URL never carries the token.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { finishSignIn, signedInPerson, signOutPerson } from './team-sign-in.ts';
import type { Callback } from './team-sign-in.ts';
import { ConsoleSession } from './console-session.ts';
import { forgetToken, storedToken, storeToken } from './session-token.ts';
import { useHashRoute, useSessionVersion } from './use-session.ts';
import { AdminView } from './views/admin-view.tsx';
import { AgentsView } from './views/agents-view.tsx';
import { InboxView } from './views/inbox-view.tsx';
import { SessionsView } from './views/sessions-view.tsx';
import { SignIn } from './views/sign-in.tsx';
import { TailView } from './views/tail-view.tsx';

/** A sign-in the provider sent this tab back from, read (and taken out of the URL) before the first render. */
const returningFromProvider = new URLSearchParams(location.search).has('state');
const callback: Promise<Callback> = finishSignIn();

export function App() {
  const [token, setToken] = useState(storedToken);
  const [returning, setReturning] = useState<Callback | undefined>();
  useEffect(() => {
    void callback.then((result) => {
      if (result.kind === 'signed-in') {
        storeToken(result.token);
        setToken(result.token);
      }
      setReturning(result);
    });
  }, []);
  if (token === undefined) {
    if (returning === undefined && returningFromProvider) return <p class="notice">Signing in…</p>;
    return (
      <SignIn
        {...(returning?.kind === 'refused' ? { teamProblem: returning.detail } : {})}
        onSignedIn={(accepted) => {
          storeToken(accepted);
          setToken(accepted);
        }}
      />
    );
  }
  return (
    <Console
      token={token}
      onSignOut={() => {
        void signOutPerson(token);
        forgetToken();
        setToken(undefined);
      }}
    />
  );
}

/** `inbox/{id}` → the view and the request it opens at (a notification's link). */
function splitRoute(route: string): [string, string | undefined] {
  const slash = route.indexOf('/');
  if (slash === -1) return [route, undefined];
  try {
    return [route.slice(0, slash), decodeURIComponent(route.slice(slash + 1))];
  } catch {
    return [route.slice(0, slash), undefined];
  }
}

const VIEWS = [
  { route: 'tail', label: 'Live tail' },
  { route: 'inbox', label: 'Attention' },
  { route: 'sessions', label: 'Sessions' },
  { route: 'agents', label: 'Agents' },
  { route: 'admin', label: 'Tokens & policy' },
] as const;

function Console({ token, onSignOut }: { token: string; onSignOut: () => void }) {
  const session = useMemo(() => new ConsoleSession(token), [token]);
  useEffect(() => {
    session.start();
    return () => session.stop();
  }, [session]);
  useSessionVersion(session);
  const [route, focus] = splitRoute(useHashRoute('tail'));
  const person = signedInPerson();
  const openCount = session.attention.open().length;
  const views = VIEWS.filter((view) => view.route !== 'admin' || session.adminAccess === 'admin');
  const current = views.some((view) => view.route === route) ? route : 'tail';
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="bar">
        <h1>AEP relay console</h1>
        <nav aria-label="Views">
          <ul>
            {views.map((view) => (
              <li key={view.route}>
                <a href={`#/${view.route}`} aria-current={current === view.route ? 'page' : undefined}>
                  {view.label}
                  {view.route === 'inbox' && openCount > 0 ? <span class="badge" aria-label={`${openCount} open`}>{openCount}</span> : null}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="connection" role="status">
          <span class={`dot ${session.socketState}`} aria-hidden="true" />
          {session.socketState === 'open' ? 'connected' : session.socketState === 'connecting' ? 'connecting…' : (session.socketDetail ?? 'disconnected')}
        </p>
        {person !== undefined && (
          <p class="person" data-testid="signed-in-person">
            {person.name} ({person.provider})
          </p>
        )}
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {current === 'tail' && <TailView session={session} />}
        {current === 'inbox' && <InboxView session={session} focus={focus} />}
        {current === 'sessions' && <SessionsView session={session} />}
        {current === 'agents' && <AgentsView session={session} />}
        {current === 'admin' && <AdminView session={session} />}
      </main>
    </div>
  );
}
