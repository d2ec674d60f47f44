/**
 * One repeat of the handler CPU stage in a process of its own: `runCpuBenchmarkRepeated`
 * starts one per repeat and reads the result, as JSON, from stdout.
 */
import { runCpuBenchmark } from './cpu.ts';

const minMsPerStage = Number(process.argv[2] ?? 1500);
if (!Number.isFinite(minMsPerStage) || minMsPerStage <= 0) throw new Error(`cpu-process: milliseconds per stage must be a positive number, not ${process.argv[2]}`);
process.stdout.write(JSON.stringify(runCpuBenchmark(minMsPerStage)));
