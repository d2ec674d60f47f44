/**
 * Sign-in: paste a token; it is checked by opening the relay's WebSocket with it and saying
 * the console's hello (the one endpoint every valid token may open, whatever its scopes;
 * discovery may be served to anyone), and kept in this tab only. A refusal is shown with the
 * relay's reason (`check-token.ts`).
 */
import { useState } from 'preact/hooks';
import { checkToken } from '../check-token.ts';

export function SignIn({ onSignedIn }: { onSignedIn: (token: string) => void }) {
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
