import { defineConfig } from 'vitest/config';
import { LongFilesFirst } from './test/support/long-files-first.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    sequence: { sequencer: LongFilesFirst },
    // Files share a worker's module cache: no test mocks modules, the two that start a stack in
    // their own process restore the environment after it (test/support/environment-snapshot.ts),
    // and re-importing the relay, the SDK and CDK for each of some 170 files was a sixth of the suite's CPU.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // expect.poll waits for an outcome; its default 1 s is a wall-clock bound a busy machine misses.
    expect: { poll: { timeout: 20_000 } },
  },
});
