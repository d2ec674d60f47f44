/**
 * Typed readers for configuration from the environment. Each fails naming the variable, so a
 * misconfigured deployment says what is wrong on its first invocation.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export function requiredString(env: Environment, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigurationError(`missing environment variable ${name}`);
  return value;
}

export function optionalString(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

export function positiveInteger(env: Environment, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) {
    throw new ConfigurationError(`environment variable ${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

export function nonNegativeInteger(env: Environment, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) {
    throw new ConfigurationError(`environment variable ${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return parsed;
}
