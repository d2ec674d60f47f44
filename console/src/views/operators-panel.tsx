/**
 * The operators the tenant trusts to sign identity cards (AEP-0003 §8.3): listed from
 * `GET /admin/operators`, added with `PUT /admin/operators/{name}` (public keys inline as a
 * JWKS, or an https URL the relay fetches), removed with `DELETE`. The relay decides who may
 * change them (a tenant-wide admin token) and validates the keys; its refusal is shown as is.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';
import type { RelayProblem } from '../relay-client.ts';

interface OperatorView {
  name: string;
  jwks?: { keys?: unknown[] };
  jwksUrl?: string;
  updatedAt: string;
}

export function OperatorsPanel({ session }: { session: ConsoleSession }) {
  const [operators, setOperators] = useState<OperatorView[] | RelayProblem | undefined>();
  const [message, setMessage] = useState<{ text: string; refused: boolean } | undefined>();
  const refresh = async () => {
    const result = await session.client.json<{ operators: OperatorView[] }>('GET', '/admin/operators');
    setOperators(result.ok ? result.value.operators : result.problem);
  };
  useEffect(() => void refresh(), [session]);
  const remove = async (operator: OperatorView) => {
    if (!confirm(`Stop trusting ${operator.name}? Hellos with its cards are no longer verified.`)) return;
    const result = await session.client.json('DELETE', `/admin/operators/${encodeURIComponent(operator.name)}`);
    setMessage(result.ok ? { text: `Removed ${operator.name}.`, refused: false } : { text: `Could not remove ${operator.name}: ${result.problem.detail}`, refused: true });
    await refresh();
  };
  return (
    <section class="operators" aria-labelledby="operators-title">
      <h3 id="operators-title">Trusted operators (identity cards)</h3>
      <p class="help">Hellos whose identity card is signed by one of these operators' keys are verified; the control policy can route on verified identity only.</p>
      {message !== undefined && (
        <p role={message.refused ? 'alert' : 'status'} class={message.refused ? 'problem' : 'notice'} data-testid="operators-message">
          {message.text}
        </p>
      )}
      {operators === undefined && <p>Loading…</p>}
      {operators !== undefined && !Array.isArray(operators) && (
        <p class="problem" role="alert">
          {operators.detail}
        </p>
      )}
      {Array.isArray(operators) && operators.length === 0 && <p class="empty">No trusted operators: every hello's identity is asserted.</p>}
      {Array.isArray(operators) && operators.length > 0 && (
        <div class="table-wrap">
          <table class="stack-on-phone" data-testid="operator-table">
            <caption class="visually-hidden">Trusted operators</caption>
            <thead>
              <tr>
                <th scope="col">Operator</th>
                <th scope="col">Keys</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {operators.map((operator) => (
                <tr key={operator.name} data-operator={operator.name}>
                  <th scope="row">{operator.name}</th>
                  <td data-label="Keys">{operator.jwksUrl ?? `${operator.jwks?.keys?.length ?? 0} inline key(s)`}</td>
                  <td data-label="Updated">
                    <time>{operator.updatedAt}</time>
                  </td>
                  <td class="actions">
                    <button type="button" class="danger" onClick={() => void remove(operator)} aria-label={`Remove ${operator.name}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <AddOperatorForm
        session={session}
        onAdded={async (name) => {
          setMessage({ text: `Trusting ${name}.`, refused: false });
          await refresh();
        }}
      />
    </section>
  );
}

function AddOperatorForm({ session, onAdded }: { session: ConsoleSession; onAdded: (name: string) => Promise<void> }) {
  const [name, setName] = useState('');
  const [keys, setKeys] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const given = keys.trim();
    let body: Record<string, unknown>;
    if (/^https?:\/\//i.test(given)) body = { jwksUrl: given };
    else {
      try {
        body = { jwks: JSON.parse(given) as unknown };
      } catch (error) {
        return setProblem(`the keys are neither an https URL nor JSON: ${(error as Error).message}`);
      }
    }
    const result = await session.client.json<unknown>('PUT', `/admin/operators/${encodeURIComponent(name.trim())}`, body);
    if (!result.ok) return setProblem(result.problem.detail);
    setProblem(undefined);
    setName('');
    setKeys('');
    await onAdded(name.trim());
  };
  return (
    <form class="issue" onSubmit={submit} aria-labelledby="operator-add-title">
      <h4 id="operator-add-title">Trust an operator</h4>
      <div class="field">
        <label for="operator-name">Operator name (the cards' operator claim)</label>
        <input id="operator-name" required value={name} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
      </div>
      <label for="operator-keys">Public keys: a JWKS as JSON, or its https URL</label>
      <textarea
        id="operator-keys"
        rows={4}
        required
        spellcheck={false}
        value={keys}
        onInput={(event) => setKeys((event.target as HTMLTextAreaElement).value)}
        aria-invalid={problem === undefined ? undefined : true}
        aria-describedby={problem === undefined ? undefined : 'operator-problem'}
      />
      {problem !== undefined && (
        <p id="operator-problem" class="problem" role="alert" data-testid="operator-problem">
          {problem}
        </p>
      )}
      <button type="submit">Trust operator</button>
    </form>
  );
}
