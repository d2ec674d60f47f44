/** What became of a command, in words, announced to screen readers as it changes. */
import type { ConsoleSession } from '../console-session.ts';
import { describeOutcome } from '../commands.ts';

export function CommandOutcomeLine({ session, commandId }: { session: ConsoleSession; commandId: string }) {
  const outcome = session.commands.get(commandId);
  if (outcome === undefined) return null;
  const followUps = session.followUps.get(commandId) ?? [];
  const settled = outcome.state === 'accepted' ? 'ok' : outcome.state === 'sending' ? 'pending' : 'bad';
  return (
    <div class={`outcome ${settled}`} role="status" aria-live="polite" data-testid="command-outcome" data-state={outcome.state}>
      <strong>{describeOutcome(outcome)}</strong>
      {outcome.detail !== undefined && <span class="detail-text"> ({outcome.detail})</span>}
      {followUps
        .filter((event) => event.type !== 'control.accepted' && event.type !== 'control.rejected')
        .map((event) => (
          <span key={String(event.id)} class="follow-up">
            {' '}
            · {String(event.type)}
          </span>
        ))}
    </div>
  );
}
