/**
 * The relay's side of the `hello` exchange (AEP-0003 §4): select exactly one version, bound
 * the declarations (`hello-bounds.ts`), check a bound token's identity (`agent-binding.ts`),
 * record the client's role, identity and capabilities verbatim, answer with the relay's own
 * hello, and only then open the connection for its other frames (see `hello-gate.ts`).
 */
import { SUPPORTED_VERSIONS } from '../../protocol/event.ts';
import { selectVersion } from '../../protocol/client-message.ts';
import type { HelloFrame } from '../../protocol/client-message.ts';
import { errorFrame, helloReply, INVALID_HELLO, VERSION_UNSUPPORTED } from '../../protocol/frames.ts';
import { helloIdentityRefusal } from '../agent-binding.ts';
import { relayCapabilities, servedSurface } from '../discovery.ts';
import { helloDeclarationsRefusal } from './hello-bounds.ts';
import { closeConnection, send } from './socket-context.ts';
import type { SocketContext } from './socket-context.ts';

export async function handleHello(context: SocketContext, hello: HelloFrame): Promise<void> {
  const { connections, config } = context.runtime;
  const { tenant } = context.principal;
  const version = selectVersion(hello.versions, SUPPORTED_VERSIONS);
  if (version === undefined) {
    if (await connections.transition(tenant, context.connectionId, ['connected'], 'rejected')) {
      await send(context, errorFrame({ code: VERSION_UNSUPPORTED, versions: SUPPORTED_VERSIONS, detail: 'no offered version is supported' }));
      await closeConnection(context, 'version-unsupported');
    }
    return;
  }
  const declarationRefusal = helloDeclarationsRefusal(hello.rawIdentity, hello.capabilities);
  if (declarationRefusal !== undefined) {
    if (await connections.transition(tenant, context.connectionId, ['connected'], 'rejected')) {
      await send(context, errorFrame({ code: INVALID_HELLO, detail: declarationRefusal }));
      await closeConnection(context, INVALID_HELLO);
    }
    return;
  }
  const identityRefusal = helloIdentityRefusal(context.principal, hello.role, hello.identity.agent);
  if (identityRefusal !== undefined) {
    // A bound token speaks only as its own agents: the roster and the control policy take
    // `identity.agent` as the claimant's name, so a borrowed name would be believed.
    if (await connections.transition(tenant, context.connectionId, ['connected'], 'rejected')) {
      await send(context, errorFrame({ code: 'unauthorized', detail: identityRefusal }));
      await closeConnection(context, 'unauthorized');
    }
    return;
  }
  const recorded = await connections.recordHello(
    tenant,
    context.connectionId,
    { version, role: hello.role, identity: hello.rawIdentity, capabilities: hello.capabilities },
    context.receivedAtMs,
  );
  if (!recorded) {
    // A second hello, or one arriving after the connection was refused: nothing changes.
    const record = await connections.getConnection(tenant, context.connectionId);
    if (record?.state === 'open') await send(context, errorFrame({ code: 'invalid-frame', detail: 'hello was already exchanged on this connection' }));
    return;
  }
  const capabilities = relayCapabilities(servedSurface(config, true));
  await send(context, helloReply(version, capabilities, { agent: 'aep-relay' }));
  await connections.transition(tenant, context.connectionId, ['hello-pending'], 'open');
}
