/**
 * One local lane worker: an execution environment of `functions/fanoutlane` in a process of its
 * own (`lane-workers.ts` forks it), taking one invocation at a time over IPC. It builds its
 * runtime from the environment the stack set up, as the deployed function does from its own;
 * with AEP_LOCAL_BUNDLES it runs the deployable bundle instead of the sources.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { readRelayConfig } from '../src/config/relay-config.ts';
import { createRuntime } from '../functions/runtime/create-runtime.ts';
import { FANOUT_LANE_TIMEOUT_SECONDS } from '../src/config/function-timeouts.ts';
import { lambdaContext } from './lambda-context.ts';
import { standInPosterFromEnv } from './stand-in-poster.ts';

type LaneHandler = (work: unknown, context: Context) => Promise<unknown>;

async function loadHandler(): Promise<LaneHandler> {
  const bundles = process.env.AEP_LOCAL_BUNDLES;
  if (bundles !== undefined && bundles !== '') {
    return ((await import(pathToFileURL(join(bundles, 'fanoutlane', 'index.mjs')).href)) as { handler: LaneHandler }).handler;
  }
  // AEP_LOCAL_STANDIN_POST_MS: the bench's stand-in poster, as in the stack's fan-out (stand-in-poster.ts).
  const standIn = standInPosterFromEnv(process.env, `lane${process.env.AEP_LOCAL_LANE_WORKER ?? ''}`);
  const runtime = createRuntime({ config: readRelayConfig(process.env), ...(standIn === undefined ? {} : { poster: standIn }) });
  const crashAfter = Number(process.env.AEP_LOCAL_LANE_CRASH_AFTER_POSTS ?? 0);
  if (crashAfter > 0) {
    // The injected fault: this environment dies in the middle of its lane, posts in flight.
    const { poster } = runtime;
    let sent = 0;
    runtime.poster = {
      ...poster,
      post: async (...args) => {
        const outcome = await poster.post(...args);
        if (outcome === 'sent' && (sent += 1) >= crashAfter) process.exit(1);
        return outcome;
      },
    };
  }
  return (await import('../functions/fanoutlane/handler.ts')).createHandler(runtime) as unknown as LaneHandler;
}

const handler = await loadHandler();
process.on('message', (message: { type: string; id: number; payload: string }) => {
  if (message.type !== 'invoke') return;
  handler(JSON.parse(message.payload), lambdaContext('fanoutlane', FANOUT_LANE_TIMEOUT_SECONDS * 1000)).then(
    (result) => process.send?.({ type: 'result', id: message.id, ok: true, body: JSON.stringify(result ?? null) }),
    (error: unknown) => process.send?.({ type: 'result', id: message.id, ok: false, body: JSON.stringify({ errorType: error instanceof Error ? error.name : 'Error', errorMessage: error instanceof Error ? error.message : String(error) }) }),
  );
});
process.on('SIGTERM', () => process.exit(0));
process.send?.({ type: 'ready' });
