/**
 * The streaming function's running invocations, so a stop of the local stack can end them
 * before DynamoDB Local goes: each one's response stream is destroyed (its writes fail, so the
 * relay's stream loop ends at its next step, src/relay/sse/serve-stream.ts) and the stop waits
 * until its handler returned, which is after its own cleanup (the stream's connection record,
 * subscription and slot lease removed). Without this a stream polled on against a stopped
 * database (`ECONNREFUSED`) and left its connection state behind on a persistent data folder.
 * Lambda has no such moment (the service is never stopped as a whole); this is the local
 * stack's own orderly shutdown.
 */
import type { Writable } from 'node:stream';

export class StreamInvocations {
  private readonly running = new Map<Writable, Promise<void>>();
  private ending = false;

  /** Tracks one invocation until `done` settles; a stream that starts while ending is ended at once. */
  track(responseStream: Writable, done: Promise<void>): void {
    if (this.ending) responseStream.destroy();
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(responseStream, settled);
    void settled.then(() => this.running.delete(responseStream));
  }

  /** Ends every running stream and waits until each handler returned. */
  async endAll(): Promise<void> {
    this.ending = true;
    for (const responseStream of this.running.keys()) responseStream.destroy();
    await Promise.all([...this.running.values()]);
  }
}
