/**
 * The index of pending connection deadlines that the deadline sweep reads
 * (`deadline-sweep.ts`): every deadline is written here when its connection opens, and taken
 * out by whoever closes the connection at it, exactly once.
 */
import type { ConnectionDeadline } from './connection-deadlines.ts';

export interface DeadlineIndexPort {
  add(deadline: ConnectionDeadline): Promise<void>;
  /** The deadlines still in the index with `sinceMs <= atMs <= throughMs`, earliest first. */
  due(sinceMs: number, throughMs: number): Promise<ConnectionDeadline[]>;
  /** Takes a deadline out of the index: true for the one caller that took it. */
  claim(deadline: ConnectionDeadline): Promise<boolean>;
  /** Puts a claimed deadline back (its close failed), for the next sweep to take. */
  restore(deadline: ConnectionDeadline): Promise<void>;
}
