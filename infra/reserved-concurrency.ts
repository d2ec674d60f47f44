/**
 * What the stack reserves of the account's Lambda concurrency, function by function: the one
 * source the stack (infra/constructs/relay-functions.ts) and `npm run preflight` (bin/preflight.ts)
 * read, so the check counts exactly what the deploy will ask for.
 *
 * Lambda lets a region's reservations add up to the account's concurrent executions less 100,
 * which it keeps unreserved (PutFunctionConcurrency, Lambda API reference). New accounts start
 * with a reduced quota, so by default nothing is reserved.
 */
import type { FunctionName } from './bundle.ts';
import type { RelaySettings } from './relay-settings.ts';
import { DEFAULT_RETRY_CONCURRENCY } from '../src/config/bridge-config.ts';

/** Executions Lambda keeps unreserved in every region, whatever the account's quota. */
export const UNRESERVED_MINIMUM = 100;

/**
 * The sink-retry mapping's maximum concurrency, and its reservation when one is asked for
 * (infra/constructs/bridges.ts `SINK_RETRY_CONCURRENCY`, the local queue's default, the same number).
 */
export const SINK_RETRY_RESERVATION = DEFAULT_RETRY_CONCURRENCY;

export interface ConcurrencyReservation {
  function: FunctionName;
  executions: number;
  /** The context key that asks for it, for messages. */
  setting: string;
}

/** Every reservation the settings ask for; an empty list reserves nothing. */
export function reservationsOf(settings: Pick<RelaySettings, 'streamConcurrency' | 'reserveSinkRetryConcurrency'>): ConcurrencyReservation[] {
  const reservations: ConcurrencyReservation[] = [];
  if (settings.streamConcurrency > 0) reservations.push({ function: 'stream', executions: settings.streamConcurrency, setting: 'streamConcurrency' });
  if (settings.reserveSinkRetryConcurrency) reservations.push({ function: 'sinkretry', executions: SINK_RETRY_RESERVATION, setting: 'reserveSinkRetryConcurrency' });
  return reservations;
}

/** The reservation per function, as the functions construct applies it. */
export function reservedExecutionsByFunction(reservations: readonly ConcurrencyReservation[]): Partial<Record<FunctionName, number>> {
  return Object.fromEntries(reservations.map((reservation) => [reservation.function, reservation.executions]));
}
