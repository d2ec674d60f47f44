/** The handler-CPU lines of BENCHMARKS.md: the figure, and how and when it was taken. */
import type { CpuResult, StageRatios } from './cpu.ts';
import { fixed, grouped, table } from './report-format.ts';

const spreadOf = (values: readonly number[]) => `${fixed(Math.min(...values), 1)}–${fixed(Math.max(...values), 1)}`;

/** One clause: how many repeats, the spread, where they ran and at what load. */
function takenClause(cpu: CpuResult): string {
  const repeats = cpu.repeats;
  if (repeats === undefined) return '';
  const where = repeats.taken === undefined ? 'taken before the stack starts' : repeats.taken.mode === 'alone' ? `taken alone (\`npm run bench -- --only cpu\`) on ${repeats.taken.date.slice(0, 10)}` : 'taken first in the full run, before the stack starts';
  const loads = [...repeats.loadAverage, ...(repeats.loadAfter === undefined ? [] : [repeats.loadAfter])];
  return `; median of ${repeats.pipelineUsPerEvent.length} repeats, spread ${spreadOf(repeats.pipelineUsPerEvent)}, ${where}, 1-minute load average ${fixed(Math.min(...loads), 2)}–${fixed(Math.max(...loads), 2)}`;
}

/** The ratio to the reference pipeline with this machine's µs beside it, or the µs alone for results from before the yardstick. */
export function cpuFigure(cpu: CpuResult): string {
  if (cpu.reference === undefined) return `${fixed(cpu.usPerEvent.pipeline, 1)} µs per event (this machine; no yardstick in these results)`;
  return `${fixed(cpu.reference.pipelineRatio, 2)}× the reference pipeline (JSON parse, walk and serialize of the same corpus, timed in alternation in the same run; this machine: ${fixed(cpu.usPerEvent.pipeline, 1)} µs per event against the reference's ${fixed(cpu.reference.usPerEvent, 1)})`;
}

const ratioSpread = (cpu: CpuResult) => {
  const ratios = cpu.repeats?.pipelineRatio;
  return cpu.reference === undefined || ratios === undefined ? '' : `; ratio over the repeats ${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)}×`;
};

export function cpuSummary(cpu: CpuResult): string {
  return `- **Handler CPU:** ${cpuFigure(cpu)} for envelope validation, matching against ${cpu.filters} compiled filters and down-leveling (golden corpus, ${fixed(cpu.matchesPerEvent, 1)} matches per event${ratioSpread(cpu)}${takenClause(cpu)}).`;
}

export function cpuMarkdown(cpu: CpuResult, machine: string): string[] {
  const repeats = cpu.repeats;
  const taken = repeats?.taken;
  const how =
    repeats === undefined
      ? []
      : [
          `How it was taken: ${taken === undefined ? 'first thing in the run, before the stack starts (no DynamoDB Local, no handlers)' : taken.mode === 'alone' ? `alone, by \`npm run bench -- --only cpu\` on ${taken.date.replace('T', ' ').slice(0, 16)} UTC (commit ${taken.commit.slice(0, 7)}), after waiting ${grouped(taken.quietWait.waitedSeconds)} s for the 1-minute load average to fall below ${taken.quietWait.maxLoad} (it was ${fixed(taken.quietWait.load, 2)})` : `first thing in the full run, before the stack starts (no DynamoDB Local, no handlers), after waiting ${grouped(taken.quietWait.waitedSeconds)} s for the 1-minute load average to fall below ${taken.quietWait.maxLoad} (${taken.quietWait.reached ? 'it did' : `it did **not**: ${fixed(taken.quietWait.load, 2)} when the wait gave up`})`}, on ${machine}; ${repeats.pipelineUsPerEvent.length} repeats of every stage, the table is the median repeat. Whole-pipeline µs per event of each repeat: ${repeats.pipelineUsPerEvent.map((value) => fixed(value, 1)).join(', ')} (spread ${spreadOf(repeats.pipelineUsPerEvent)}, ${fixed((100 * (Math.max(...repeats.pipelineUsPerEvent) - Math.min(...repeats.pipelineUsPerEvent))) / cpu.usPerEvent.pipeline, 0)}% of the median); the machine's 1-minute load average before each: ${repeats.loadAverage.map((value) => fixed(value, 2)).join(', ')}${repeats.loadAfter === undefined ? '' : `, and ${fixed(repeats.loadAfter, 2)} after the last`}. The cores are shared with other work, so a load above about 1 means the figure is slower than the code (the 44 µs once committed was taken at a load of about 5).`,
          '',
        ];
  const reference = cpu.reference;
  // Each stage in alternating pairs of its own with the reference (the median pair, the mean over
  // the repeats); results from before: the stage timed alone ÷ the reference's µs of the same repeat.
  const stageRow = (name: string, stage: keyof StageRatios, us: number): string[] => {
    if (reference === undefined) return [name, fixed(us, 2)];
    const ratio = reference.stageRatios?.[stage] ?? us / reference.usPerEvent;
    return [name, `${fixed(ratio, 2)}×`, fixed(us, 2)];
  };
  return [
    '## Handler CPU per event (in-process)',
    '',
    `Over the official golden corpus (\`${cpu.corpus}\`, ${cpu.corpusEvents} events, ${grouped(cpu.eventsProcessed)} processed in the whole-pipeline run) with the protocol functions the handlers call: \`JSON.parse\` + \`validateEnvelope\`; ${cpu.filters} filters compiled with \`compileFilter\` (25 session, 25 type patterns, 20 severity bands, 15 agent inclusions, 15 combinations including match-all); and \`deliveryText\` (down-level + serialize when the capture ceiling is below the event's level) for every match. Capture ceilings: ${Object.entries(cpu.ceilings).map(([ceiling, count]) => `${count} ${ceiling}`).join(', ')}.`,
    '',
    table(
      reference === undefined ? ['stage', 'µs per event'] : ['stage', '**÷ reference** (same run)', 'this machine: µs per event'],
      [
        stageRow('parse + envelope validation', 'parseAndValidate', cpu.usPerEvent.parseAndValidate),
        stageRow(`match against ${cpu.filters} filters`, 'match100', cpu.usPerEvent.match100),
        stageRow(`delivery text for ${fixed(cpu.matchesPerEvent, 1)} matches (${fixed(cpu.downlevelsPerEvent, 1)} down-leveled)`, 'deliveryText', cpu.usPerEvent.deliveryText),
        reference === undefined ? ['**whole pipeline**', `**${fixed(cpu.usPerEvent.pipeline, 2)}**`] : ['**whole pipeline** (alternating slices with the reference)', `**${fixed(reference.pipelineRatio, 2)}×**`, fixed(cpu.usPerEvent.pipeline, 2)],
        ...(reference === undefined ? [] : [['reference pipeline (the yardstick: JSON parse, walk, serialize)', '1×', fixed(reference.usPerEvent, 2)]]),
      ],
    ),
    '',
    'The µs are this machine\'s and move with its load and model; the ratio to the reference pipeline (`bench/cpu-reference.ts`: a fixed JSON parse, walk and serialize of the same corpus, timed in 30 alternating pairs of slices with the whole pipeline, the ratio the median over the pairs) is the figure to compare across machines and builds. ' + (reference?.stageRatios === undefined ? 'Each stage alone is timed on its own just before the pairs, its ratio taken to the reference\'s µs of the same repeat.' : 'Each stage is timed the same way, in 15 alternating pairs of its own with the reference, and its ratio is the median pair, the mean over the repeats, each repeat in a fresh process (the µs beside are the median repeat\'s).'),
    '',
    'Stages are timed separately, so their sum need not equal the pipeline figure. Handler CPU is small next to the DynamoDB and API Gateway round trips the handlers wait on.',
    '',
    ...how,
  ];
}
