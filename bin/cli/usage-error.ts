/** A command line the CLI refuses: printed with the usage, exit code 2 (`exit-codes.ts`). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
