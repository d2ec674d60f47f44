/**
 * A deadline for one piece of request work (a WebSocket frame, a `$connect`), so that overload
 * is answered out loud instead of running into API Gateway's integration timeout (29 s) or the
 * function's own, where the client hears nothing (a frame) or a 500 (an upgrade).
 *
 * `withinDeadline` runs the work with its deadline in scope and gives up at it: the caller then
 * answers the refusal. The work itself cannot be stopped from outside, so every DynamoDB call it
 * makes reads the deadline in scope (`currentDeadline`, a middleware of `dynamo-client.ts`) and
 * fails at once once it has passed: the abandoned work ends at its next call instead of queueing
 * more of them behind the overload.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<number>();

/** The work ran out of time (its own deadline, or a call made after it). */
export class DeadlinePassed extends Error {
  constructor(readonly deadlineAtMs: number) {
    super('the work ran past its deadline');
    this.name = 'DeadlinePassed';
  }
}

/** The deadline (epoch ms) of the work this code runs for, if it has one. */
export function currentDeadline(): number | undefined {
  return scope.getStore();
}

/** Runs `work` with the deadline in scope; rejects with `DeadlinePassed` if it has not settled by then. */
export function withinDeadline<T>(deadlineAtMs: number, now: () => number, work: () => Promise<T>): Promise<T> {
  const remainingMs = deadlineAtMs - now();
  if (remainingMs <= 0) return Promise.reject(new DeadlinePassed(deadlineAtMs));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlinePassed(deadlineAtMs)), remainingMs);
    scope.run(deadlineAtMs, work).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
