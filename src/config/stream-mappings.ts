/**
 * Where each event source mapping on the event log's stream starts reading when it is created:
 * the deployed mappings (infra/constructs/fanout.ts and bridges.ts, which say why) and the local
 * stack's pollers read from here, so both start at the same place.
 */
export type StreamStartingPosition = 'LATEST' | 'TRIM_HORIZON';

export const STREAM_STARTING_POSITIONS = {
  fanout: 'TRIM_HORIZON',
  bridges: 'TRIM_HORIZON',
} as const satisfies Record<'fanout' | 'bridges', StreamStartingPosition>;
