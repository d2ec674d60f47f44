/**
 * Who the console's commands say they are from (AEP-0004 §2.2: a command's `agent` names the
 * sender, its `source` the sender's URI). A token bound to agents may send only events and
 * commands that carry one of them (the relay refuses anything else `unauthorized`), so with such
 * a token the console speaks as the first agent it is bound to (`GET /token` lists them sorted); an unbound token speaks as
 * `console`. The token's grant comes from `GET /token`.
 *
 * The console's `hello` names no agent at all: it is a consumer-only connection (it never
 * claims a session or emits sequenced events), and AEP-0003 §4 rule 3 requires
 * `identity.agent` of emitters only. Naming `console` there would be refused for a bound token
 * (the relay keeps the names a bound connection declares to its agents).
 */
export const CONSOLE_AGENT = 'console';

export interface SenderIdentity {
  agent: string;
  source: string;
}

export function senderIdentityOf(boundAgents: readonly string[] | undefined): SenderIdentity {
  const agent = boundAgents?.[0] ?? CONSOLE_AGENT;
  // The recommended source form (AEP-0001 §5.1), whose agent segment a bound token's must match.
  return { agent, source: `aep://console/agent/${encodeURIComponent(agent)}` };
}
