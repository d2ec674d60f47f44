/**
 * The command line of `npm run bench` (bench/bench.ts, which hands it on) and of bench/run.ts:
 * one definition, so both refuse and explain the same flags.
 */
import { UsageError } from '../bin/cli/cli-arguments.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';

/** Stages `--only` measures alone (`lanes` runs bench/lanes-stage.ts). */
export const ONLY_STAGES = ['cpu', 'paused', 'history', 'reconnect', 'fresh', 'fanout', 'latency', 'sse-hour', 'lanes'] as const;
export type OnlyStage = (typeof ONLY_STAGES)[number];

const USAGE = `Usage: npm run bench [-- --only <stage> | --history-only | --report-only]

Measures cost per event, latency and how they grow on the local stack, and writes BENCHMARKS.md,
bench/results.json and the plots (README "Cost"; environment knobs in bench/run.ts). A full run
takes a long time and wants a quiet machine.

  --only <stage>   measure one stage alone and merge it into bench/results.json:
                   ${ONLY_STAGES.join(', ')}
  --history-only   the same as --only history
  --report-only    re-render BENCHMARKS.md and the plots from bench/results.json, measuring nothing`;

export interface BenchArguments {
  only?: OnlyStage;
  reportOnly: boolean;
}

export function benchArguments(): BenchArguments {
  const { values } = scriptArguments({
    command: 'npm run bench --',
    usage: USAGE,
    config: { options: { only: { type: 'string' }, 'history-only': { type: 'boolean' }, 'report-only': { type: 'boolean' } } },
    check: ({ values }) => {
      if (values.only !== undefined && !(ONLY_STAGES as readonly string[]).includes(values.only)) throw new UsageError(`--only takes ${ONLY_STAGES.join(', ')}, not ${values.only}`);
      if (values['history-only'] === true && values.only !== undefined && values.only !== 'history') throw new UsageError('--history-only is --only history; give one of them');
    },
  });
  const only = values['history-only'] === true ? 'history' : (values.only as OnlyStage | undefined);
  return { ...(only === undefined ? {} : { only }), reportOnly: values['report-only'] === true };
}
