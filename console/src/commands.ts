/**
 * Commands the console sends (AEP-0004 §5) and what became of each: the target's ack
 * (`control.accepted` / `control.rejected`, `cause` = the command id, §3), the relay's
 * refusal on the target's behalf (an `error` frame with that `cause`, §4.2), or silence past
 * the ack window, which the sender treats as `timeout` (§3).
 */
import type { AepObject } from './attention.ts';

export type CommandState = 'sending' | 'accepted' | 'rejected' | 'refused' | 'timeout';

export interface CommandOutcome {
  id: string;
  type: string;
  session: string;
  state: CommandState;
  /** The reason or error code, when rejected or refused. */
  code?: string;
  detail?: string;
}

/** Relay refusal codes (AEP-0004 §4.2 and the relay's own), in words a person acts on. */
const REFUSALS: Record<string, string> = {
  unauthorized: 'the relay refused it: this token may not send this command (it needs the control scope, and the tenant policy must allow it)',
  'no-route': 'the relay refused it: no agent is connected for this session right now',
  ambiguous: 'the relay refused it: more than one live connection claims this session, so it routes to none',
  unsupported: 'the relay refused it: the agent does not accept this command',
  'limit-exceeded': 'the relay refused it: a limit of this tenant was reached',
  unavailable: 'the relay could not route it just now; try again',
  'invalid-event': 'the relay refused it as malformed',
};

/** Target rejection reasons (AEP-0004 §3). */
const REJECTIONS: Record<string, string> = {
  unsupported: 'the agent rejected it: it does not support this command',
  unauthorized: 'the agent rejected it: you are not allowed to do this',
  busy: 'the agent rejected it: it is busy; try again later',
  refused: 'the agent declined it',
  invalid: 'the agent rejected it as invalid (the request may already be answered)',
};

export function describeOutcome(outcome: CommandOutcome): string {
  switch (outcome.state) {
    case 'sending':
      return 'sent, waiting for the agent to acknowledge';
    case 'accepted':
      return 'accepted by the agent';
    case 'rejected':
      return REJECTIONS[outcome.code ?? ''] ?? `the agent rejected it (${outcome.code ?? 'no reason'})`;
    case 'refused':
      return REFUSALS[outcome.code ?? ''] ?? `the relay refused it (${outcome.code ?? 'unknown code'})`;
    case 'timeout':
      return 'no acknowledgement within the ack window (treated as timeout)';
  }
}

export class CommandBook {
  private readonly outcomes = new Map<string, CommandOutcome>();

  sent(command: AepObject): CommandOutcome {
    const outcome: CommandOutcome = { id: String(command.id), type: String(command.type), session: String(command.session), state: 'sending' };
    this.outcomes.set(outcome.id, outcome);
    return outcome;
  }

  /** Folds an ack event or a `cause`-matched error frame in; returns the outcome it settled. */
  apply(message: AepObject): CommandOutcome | undefined {
    const cause = typeof message.cause === 'string' ? message.cause : '';
    const outcome = this.outcomes.get(cause);
    // Only a pending command settles: the first decision stands (AEP-0004 §3: one ack per command).
    if (outcome === undefined || (outcome.state !== 'sending' && outcome.state !== 'timeout')) return undefined;
    const data = (typeof message.data === 'object' && message.data !== null ? message.data : {}) as AepObject;
    if (message.type === 'control.accepted') outcome.state = 'accepted';
    else if (message.type === 'control.rejected') {
      outcome.state = 'rejected';
      if (typeof data.reason === 'string') outcome.code = data.reason;
      if (typeof data.detail === 'string') outcome.detail = data.detail;
    } else if (message.type === 'error') {
      outcome.state = 'refused';
      if (typeof message.code === 'string') outcome.code = message.code;
      if (typeof message.detail === 'string') outcome.detail = message.detail;
    } else return undefined;
    return outcome;
  }

  timedOut(id: string): void {
    const outcome = this.outcomes.get(id);
    if (outcome?.state === 'sending') outcome.state = 'timeout';
  }

  get(id: string): CommandOutcome | undefined {
    return this.outcomes.get(id);
  }
}
