/**
 * The discovery document (AEP-0003 §3.4), built from what this deployment actually serves,
 * and the capability block the relay's WebSocket `hello` reply reuses (AEP-0003 §4).
 */
import { CAPTURE_LEVELS } from '../../protocol/levels.ts';
import type { JsonObject } from '../../protocol/event.ts';
import { SUPPORTED_VERSIONS } from '../../protocol/event.ts';
import { MAX_PAGE_LIMIT } from '../history/query-params.ts';

export interface DiscoverySurface {
  replayBuffer: number;
  stream: boolean;
  socket: boolean;
  /** Whether command routing (AEP-0004) is wired on the socket. */
  control: boolean;
  /** Whether the roster frame (AEP-0003 §4.1) is answered. */
  roster: boolean;
}

/** What the deployment's configuration says it serves. */
export interface ServedBindings {
  replayBuffer: number;
  surface: { stream: boolean; socket: boolean };
}

/**
 * The surface a deployment serves. `viaSocket` is set where the caller is the socket itself
 * (the relay's hello): a hello proves the socket, with its command routing and roster, is served.
 */
export function servedSurface(served: ServedBindings, viaSocket = false): DiscoverySurface {
  const socket = viaSocket || served.surface.socket;
  return { replayBuffer: served.replayBuffer, stream: served.surface.stream, socket, control: socket, roster: socket };
}

/** Capabilities shared by discovery and the relay's hello. */
export function relayCapabilities(surface: DiscoverySurface): JsonObject {
  return {
    filters: ['attr-match'],
    // `buffer` counts the newest events per session that replay serves.
    replay: { buffer: surface.replayBuffer, all: true },
    capture: [...CAPTURE_LEVELS],
    // The relay routes commands (AEP-0004 §4) but accepts none itself.
    ...(surface.control ? { control: { accepts: [] } } : {}),
    ...(surface.roster ? { roster: {} } : {}),
    // This relay's history surface beyond the replay window (AEP-0001 §7.5): not part of AEP.
    experimental: { history: { sessions: '/sessions', history: '/history', maxPage: MAX_PAGE_LIMIT } },
  };
}

export function discoveryDocument(surface: DiscoverySurface): JsonObject {
  return {
    aep: [...SUPPORTED_VERSIONS],
    role: 'collector',
    endpoints: {
      events: '/events',
      ...(surface.stream ? { stream: '/stream' } : {}),
      ...(surface.socket ? { socket: '/socket' } : {}),
    },
    capabilities: relayCapabilities(surface),
  };
}
