/**
 * Sign-in: paste a token; it is checked by opening the relay's WebSocket with it and saying
 * the console's hello (the one endpoint every valid token may open, whatever its scopes;
 * discovery may be served to anyone), and kept in this tab only. A refusal is shown with the
 * relay's reason (`check-token.ts`).
 */
import { useEffect, useState } from 'preact/hooks';
import { checkToken } from '../check-token.ts';
import { lookUpProvider, startSignIn } from '../team-sign-in.ts';

export function SignIn({ onSignedIn, teamProblem }: { onSignedIn: (token: string) => void; teamProblem?: string }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    if (candidate === '') return setProblem('Paste a token first.');
    setBusy(true);
    const verdict = await checkToken(candidate);
    setBusy(false);
    if (verdict.verdict === 'accepted') return onSignedIn(candidate);
    setProblem(verdict.reason);
  };
  return (
    <main class="sign-in" id="main">
      <h1>AEP relay console</h1>
      <TeamSignIn {...(teamProblem === undefined ? {} : { problem: teamProblem })} />
      <form onSubmit={submit} aria-describedby="token-help">
        <label for="token">Relay token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
          aria-invalid={problem === undefined ? undefined : true}
          aria-describedby={problem === undefined ? undefined : 'token-problem'}
        />
        <p id="token-help" class="help">
          The token stays in this browser tab only (session storage) and is sent to this relay alone. Closing the tab signs you out.
        </p>
        {problem !== undefined && (
          <p id="token-problem" class="problem" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/**
 * Team sign-in: name the tenant, then "Sign in with <provider>" takes this tab to the tenant's
 * identity provider and back (`team-sign-in.ts`).
 */
function TeamSignIn({ problem: given }: { problem?: string }) {
  const [tenant, setTenant] = useState('');
  const [provider, setProvider] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>(given);
  useEffect(() => setProblem(given), [given]);
  const [busy, setBusy] = useState(false);
  const lookUp = async (event: Event) => {
    event.preventDefault();
    const name = tenant.trim();
    if (name === '') return setProblem('Name your tenant first.');
    setBusy(true);
    const found = await lookUpProvider(name);
    setBusy(false);
    if (!found.ok) return setProblem(found.detail);
    setProblem(undefined);
    setProvider(found.displayName);
  };
  const go = async () => {
    setBusy(true);
    const failed = await startSignIn(tenant.trim());
    if (failed !== undefined) {
      setBusy(false);
      setProblem(failed);
    }
  };
  return (
    <section class="team-sign-in" aria-labelledby="team-sign-in-title">
      <h2 id="team-sign-in-title">Team sign-in</h2>
      <form onSubmit={lookUp}>
        <label for="tenant">Tenant</label>
        <input id="tenant" name="tenant" autoComplete="organization" spellcheck={false} value={tenant} onInput={(event) => { setTenant((event.target as HTMLInputElement).value); setProvider(undefined); }} />
        {provider === undefined && (
          <button type="submit" disabled={busy}>
            Continue
          </button>
        )}
      </form>
      {provider !== undefined && (
        <button type="button" disabled={busy} onClick={() => void go()}>
          Sign in with {provider}
        </button>
      )}
      {problem !== undefined && (
        <p id="team-problem" class="problem" role="alert">
          {problem}
        </p>
      )}
      <h2>Or paste a token</h2>
    </section>
  );
}
