/**
 * The streaming function's running invocations, so a stop of the local stack can end them
 * before DynamoDB Local goes: each client is told with a closing comment and its response
 * ended, each one's response stream is destroyed (its writes fail, so the
 * relay's stream loop ends at its next step, src/relay/sse/serve-stream.ts) and the stop waits
 * until its handler returned, which is after its own cleanup (the stream's connection record,
 * subscription and slot lease removed). Without this a stream polled on against a stopped
 * database (`ECONNREFUSED`) and left its connection state behind on a persistent data folder.
 * Lambda has no such moment (the service is never stopped as a whole); this is the local
 * stack's own orderly shutdown.
 */
/** Ends one invocation's response: tells its client, then cuts the function's response stream. */
export type EndInvocation = () => void;

export class StreamInvocations {
  private readonly running = new Map<EndInvocation, Promise<void>>();
  private ending = false;

  /** Tracks one invocation until `done` settles; a stream that starts while ending is ended at once. */
  track(end: EndInvocation, done: Promise<void>): void {
    if (this.ending) end();
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(end, settled);
    void settled.then(() => this.running.delete(end));
  }

  /** Ends every running stream and waits until each handler returned. */
  async endAll(): Promise<void> {
    this.ending = true;
    for (const end of this.running.keys()) end();
    await Promise.all([...this.running.values()]);
  }
}
