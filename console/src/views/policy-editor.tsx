/** The tenant's control policy as JSON; the relay validates it, and its reason is shown at the editor. */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';

export function PolicyEditor({ session }: { session: ConsoleSession }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  useEffect(() => {
    void session.client.json<unknown>('GET', '/admin/policy').then((result) => {
      if (result.ok) setText(JSON.stringify(result.value, null, 2));
      else setProblem(result.problem.detail);
    });
  }, [session]);
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(undefined);
    let policy: unknown;
    try {
      policy = JSON.parse(text);
    } catch (error) {
      return setProblem(`not JSON: ${(error as Error).message}`);
    }
    const result = await session.client.json<unknown>('PUT', '/admin/policy', policy);
    if (!result.ok) return setProblem(result.problem.detail);
    setProblem(undefined);
    setText(JSON.stringify(result.value, null, 2));
    setSaved('Policy saved.');
  };
  return (
    <form class="policy" onSubmit={save} aria-labelledby="policy-title">
      <h3 id="policy-title">Control policy</h3>
      <p class="help" id="policy-help">
        Who may send which command to which session or agent: {'{ "default": "allow" | "deny", "rules": [{ "effect", "tokens"?, "types"?, "sessions"?, "agents"? }] }'}; the first matching rule wins; patterns end in * for a prefix.
      </p>
      <label for="policy-text">Policy (JSON)</label>
      <textarea
        id="policy-text"
        rows={10}
        spellcheck={false}
        value={text}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        aria-invalid={problem === undefined ? undefined : true}
        aria-describedby={problem === undefined ? 'policy-help' : 'policy-help policy-problem'}
      />
      {problem !== undefined && (
        <p id="policy-problem" class="problem" role="alert" data-testid="policy-problem">
          {problem}
        </p>
      )}
      {saved !== undefined && <p role="status">{saved}</p>}
      <button type="submit">Save policy</button>
    </form>
  );
}
