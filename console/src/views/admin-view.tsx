/**
 * Tokens and control policy, for admin tokens (the admin routes under `/admin/`): list,
 * issue (the secret is shown once), revoke, rotate; the tenant's control policy (AEP-0004
 * §4.3), edited as JSON with the relay's validation error shown beside it; the operators
 * trusted to sign identity cards (`operators-panel.tsx`).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';
import type { RelayProblem } from '../relay-client.ts';
import { listOf } from '../tail-filter.ts';
import { OperatorsPanel } from './operators-panel.tsx';
import { PolicyEditor } from './policy-editor.tsx';

interface TokenView {
  tokenId: string;
  scopes: string[];
  agents?: string[];
  label?: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  status: string;
}

const SCOPES = ['emit', 'consume', 'control', 'admin'] as const;

export function AdminView({ session }: { session: ConsoleSession }) {
  const [tokens, setTokens] = useState<TokenView[] | RelayProblem | undefined>();
  const [secret, setSecret] = useState<{ tokenId: string; token: string; action: string } | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const refresh = async () => {
    const result = await session.client.json<{ tokens: TokenView[] }>('GET', '/admin/tokens');
    setTokens(result.ok ? result.value.tokens : result.problem);
  };
  useEffect(() => void refresh(), [session]);
  const revoke = async (token: TokenView) => {
    if (!confirm(`Revoke ${token.tokenId}? Its connections are closed at once.`)) return;
    const result = await session.client.json('DELETE', `/admin/tokens/${encodeURIComponent(token.tokenId)}`);
    setMessage(result.ok ? `Revoked ${token.tokenId}.` : `Could not revoke ${token.tokenId}: ${result.problem.detail}`);
    await refresh();
  };
  const rotate = async (token: TokenView) => {
    const result = await session.client.json<{ tokenId: string; token: string }>('POST', `/admin/tokens/${encodeURIComponent(token.tokenId)}/rotate`);
    if (result.ok) setSecret({ tokenId: result.value.tokenId, token: result.value.token, action: `replaces ${token.tokenId}, now revoked` });
    else setMessage(`Could not rotate ${token.tokenId}: ${result.problem.detail}`);
    await refresh();
  };
  return (
    <section aria-labelledby="admin-title">
      <h2 id="admin-title">Tokens &amp; policy</h2>
      {secret !== undefined && <SecretOnce secret={secret} onDone={() => setSecret(undefined)} />}
      {message !== undefined && (
        <p role="status" class="notice" data-testid="admin-message">
          {message}
        </p>
      )}
      <IssueForm
        session={session}
        onIssued={async (issued) => {
          setSecret({ ...issued, action: 'issued' });
          await refresh();
        }}
      />
      <h3>Tokens of this tenant</h3>
      {tokens === undefined && <p>Loading…</p>}
      {tokens !== undefined && !Array.isArray(tokens) && (
        <p class="problem" role="alert">
          {tokens.detail}
        </p>
      )}
      {Array.isArray(tokens) && (
        <div class="table-wrap">
          <table class="stack-on-phone" data-testid="token-table">
            <caption class="visually-hidden">Tokens</caption>
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col">Scopes</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.tokenId} data-token={token.tokenId}>
                  <th scope="row">
                    {token.tokenId}
                    {token.label !== undefined && <div class="meta">{token.label}</div>}
                    {token.agents !== undefined && <div class="meta">agents: {token.agents.join(', ')}</div>}
                  </th>
                  <td data-label="Scopes">{token.scopes.join(', ')}</td>
                  <td data-label="Status" data-testid="token-status">
                    {token.status}
                  </td>
                  <td data-label="Created">
                    <time>{token.createdAt}</time>
                  </td>
                  <td class="actions">
                    {token.status === 'active' && (
                      <>
                        <button type="button" class="secondary" onClick={() => void rotate(token)} aria-label={`Rotate ${token.tokenId}`}>
                          Rotate
                        </button>
                        <button type="button" class="danger" onClick={() => void revoke(token)} aria-label={`Revoke ${token.tokenId}`}>
                          Revoke
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <PolicyEditor session={session} />
      <OperatorsPanel session={session} />
    </section>
  );
}

function IssueForm({ session, onIssued }: { session: ConsoleSession; onIssued: (issued: { tokenId: string; token: string }) => Promise<void> }) {
  const [scopes, setScopes] = useState<string[]>(['consume']);
  const [label, setLabel] = useState('');
  const [agents, setAgents] = useState('');
  const [hours, setHours] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { scopes };
    if (label.trim() !== '') body.label = label.trim();
    if (listOf(agents).length > 0) body.agents = listOf(agents);
    if (hours.trim() !== '') body.expiresInSeconds = Math.round(Number(hours) * 3600);
    const result = await session.client.json<{ tokenId: string; token: string }>('POST', '/admin/tokens', body);
    if (!result.ok) return setProblem(result.problem.detail);
    setProblem(undefined);
    setLabel('');
    await onIssued({ tokenId: result.value.tokenId, token: result.value.token });
  };
  return (
    <form class="issue" onSubmit={submit} aria-labelledby="issue-title">
      <h3 id="issue-title">Issue a token</h3>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <span class="check" key={scope}>
            <input
              id={`scope-${scope}`}
              type="checkbox"
              checked={scopes.includes(scope)}
              onChange={(event) => setScopes((event.target as HTMLInputElement).checked ? [...scopes, scope] : scopes.filter((name) => name !== scope))}
            />
            <label for={`scope-${scope}`}>{scope}</label>
          </span>
        ))}
      </fieldset>
      <div class="field">
        <label for="issue-label">Label</label>
        <input id="issue-label" value={label} onInput={(event) => setLabel((event.target as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="issue-agents">Bound to agents (optional)</label>
        <input id="issue-agents" value={agents} onInput={(event) => setAgents((event.target as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for="issue-hours">Expires after hours (optional)</label>
        <input id="issue-hours" type="number" min="0" step="any" value={hours} onInput={(event) => setHours((event.target as HTMLInputElement).value)} />
      </div>
      {problem !== undefined && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      <button type="submit">Issue token</button>
    </form>
  );
}

function SecretOnce({ secret, onDone }: { secret: { tokenId: string; token: string; action: string }; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="alert" data-testid="new-secret">
      <p>
        Token <strong data-testid="new-token-id">{secret.tokenId}</strong> {secret.action}. Copy the secret now: it is shown this once and cannot be read again.
      </p>
      <label for="secret-value">Secret</label>
      <input id="secret-value" readOnly value={secret.token} onFocus={(event) => (event.target as HTMLInputElement).select()} />
      <div class="row">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard.writeText(secret.token).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
