/**
 * The process environment as it is now, and a way back to it. A stack started in the test's own
 * process (`local/stack.ts`) writes its settings into `process.env`, and test files share their
 * worker (vitest.config.ts, `isolate: false`): a file that starts one restores the environment
 * after it, or the next file's stacks inherit its settings.
 */
export function environmentSnapshot(): { restore(): void } {
  const saved = { ...process.env };
  return {
    restore() {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    },
  };
}
