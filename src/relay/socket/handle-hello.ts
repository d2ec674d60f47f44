/**
 * The relay's side of the `hello` exchange (AEP-0003 §4): select exactly one version, bound
 * the declarations (`hello-bounds.ts`), check a bound token's identity (`agent-binding.ts`),
 * verify an identity card if one is carried (`identity/card-check.ts`, AEP-0003 §8.3),
 * record the client's role, identity and capabilities verbatim, answer with the relay's own
 * hello, and only then open the connection for its other frames (see `hello-gate.ts`).
 */
import { SUPPORTED_VERSIONS } from '../../protocol/event.ts';
import { selectVersion } from '../../protocol/client-message.ts';
import type { HelloFrame } from '../../protocol/client-message.ts';
import { helloReply } from '../../protocol/frames.ts';
import { forbidden, invalidFrame, invalidHello, versionUnsupported } from '../../errors/relay-error.ts';
import { helloIdentityRefusal } from '../domain/agent-binding.ts';
import { relayCapabilities, servedSurface } from '../discovery/discovery.ts';
import { checkHelloCard } from '../identity/card-check.ts';
import { helloDeclarationsRefusal } from './hello-bounds.ts';
import { answer } from './socket-context.ts';
import { refuse, refuseConnection } from './socket-refusals.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleHello(context: SocketContext, hello: HelloFrame): Promise<void> {
  const { connections, config } = context.runtime;
  const { tenant } = context.principal;
  const version = selectVersion(hello.versions, SUPPORTED_VERSIONS);
  if (version === undefined) {
    await refuseConnection(context, versionUnsupported(SUPPORTED_VERSIONS, 'no offered version is supported'), ['connected']);
    return;
  }
  const declarationRefusal = helloDeclarationsRefusal(hello.rawIdentity, hello.capabilities);
  if (declarationRefusal !== undefined) {
    await refuseConnection(context, invalidHello(declarationRefusal), ['connected']);
    return;
  }
  const identityRefusal = helloIdentityRefusal(context.principal, hello.role, hello.identity.agent);
  if (identityRefusal !== undefined) {
    // A bound token speaks only as its own agents: the roster and the control policy take
    // `identity.agent` as the claimant's name, so a borrowed name would be believed.
    await refuseConnection(context, forbidden(identityRefusal), ['connected']);
    return;
  }
  // Recorded before anything slower (a card's key set, a signature): the hello gate holds the
  // connection's other frames from the moment this write lands, so a hello whose invocation
  // started late loses no more of the gate's bound than this one write (`hello-gate.ts`). A
  // repeated hello is refused here, before any card of it is verified.
  const recorded = await connections.recordHello(tenant, context.connectionId, { version, role: hello.role, identity: hello.rawIdentity, capabilities: hello.capabilities }, context.receivedAtMs, context.requestId);
  if (!recorded) return answerRepeatedHello(context);
  const card = await checkHelloCard(context.runtime, context.principal, hello);
  if (card.kind === 'failed' && card.onFailure === 'close') {
    await refuseConnection(context, forbidden(cardRefusal(card.reason)), ['hello-pending']);
    return;
  }
  // Before the connection opens, so its claims and commands carry the standing (`fanout/session-claims.ts`, `route-command.ts`).
  if (card.kind === 'verified') await connections.recordVerified(tenant, context.connectionId, card.standing);
  const capabilities = relayCapabilities(servedSurface(config, true));
  await answer(context, helloReply(version, capabilities, { agent: 'aep-relay' }));
  // After the relay's hello (its first frame, AEP-0003 §3.5.1): the connection goes on unverified.
  if (card.kind === 'failed') await refuse(context, forbidden(`${cardRefusal(card.reason)}; this connection continues unverified`), 'connection');
  if (card.kind === 'verified' && card.onExpiry === 'close') await closeAtCardExpiry(context, card.standing.untilMs);
  await connections.transition(tenant, context.connectionId, ['hello-pending'], 'open', context.requestId);
}

/** A second hello, or one arriving after the connection was refused: nothing changes. */
async function answerRepeatedHello(context: SocketContext): Promise<void> {
  const record = await context.runtime.connections.getConnection(context.principal.tenant, context.connectionId);
  if (record?.state === 'open') await refuse(context, invalidFrame('hello was already exchanged on this connection'), 'connection');
}

/**
 * Why the card was refused. Code `unauthorized`: AEP-0003 names it for a connection that fails
 * the §8 identity and authentication posture (the roster's and subscribe's refusals), and the
 * card is §8.3's identity document; no code of the spec's closed sets fits better, and a client
 * that knows none of this reads an ordinary authentication refusal.
 */
function cardRefusal(reason: string): string {
  return `identity card not verified (AEP-0003 §8.3): ${reason}`;
}

/** Under `cardFailure: close`, a verified connection ends when its card does (like a token's expiry). */
async function closeAtCardExpiry(context: SocketContext, untilMs: number): Promise<void> {
  const { runtime } = context;
  // API Gateway closes every connection within its lifetime; a later expiry needs no deadline.
  if (untilMs >= runtime.now() + runtime.config.connectionLifetimeSeconds * 1000) return;
  await runtime.deadlines.schedule({ tenant: context.principal.tenant, connectionId: context.connectionId, atMs: untilMs, reason: 'card-expired' });
}
