/**
 * The order test files start in. Vitest runs the longest files first once it has timed them, but
 * a fresh clone (CI) has no timings, and it then starts larger files first: the simulation's
 * small files, a minute or more each, ran last and alone on one worker while the other idled.
 * These files, the longest of a full run (longest first), start before the rest.
 */
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'test/sim/delivery-sim-injections.test.ts',
  'test/sim/delivery-sim-second-half.test.ts',
  'test/cli/walkthrough.test.ts',
  'test/sim/delivery-sim.test.ts',
  'test/reliability/overload.test.ts',
  'test/browser/console.test.ts',
  'test/reliability/delivery-faults.test.ts',
  'test/integration/slow-consumer.test.ts',
  'test/local/graceful-stop.test.ts',
  'test/integration/slow-hello.test.ts',
  'test/reliability/crash-recovery.test.ts',
  'test/cli/aep-relay.test.ts',
  'test/infra/relay-stack.test.ts',
];

export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the rest keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
