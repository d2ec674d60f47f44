/**
 * cdk.json sets every CDK feature flag aws-cdk-lib recommends, so the stack is built the way new
 * CDK apps are; a flag pinned against its recommendation says why here. An aws-cdk-lib upgrade
 * that recommends a new flag fails this test until the flag is set (after reviewing its
 * template change) or pinned.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectContext } from '../../infra/project-context.ts';

const recommended = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'node_modules', 'aws-cdk-lib', 'recommended-feature-flags.json'), 'utf8')) as Record<string, unknown>;

/** Flags kept off their recommended value, and why. */
const PINNED: Record<string, { value: unknown; reason: string }> = {
  '@aws-cdk/aws-lambda:useCdkManagedLogGroup': {
    value: false,
    // The relay's functions each name their log group already (no effect on them); the flag's
    // only change is a CloudFormation log group `/aws/lambda/{name}` for CDK's BucketDeployment
    // function, created beside that function with nothing ordering it before the deployment's first
    // invocation, which creates the same group itself: a first deploy could fail on
    // "already exists". It would also be retained for two years after a destroy.
    reason: 'a possible AlreadyExists on the first deploy, for no gain',
  },
};

describe('CDK feature flags', () => {
  it('sets every recommended flag in cdk.json, at its recommended value unless pinned', () => {
    const context = projectContext();
    const expected = { ...recommended, ...Object.fromEntries(Object.entries(PINNED).map(([flag, pin]) => [flag, pin.value])) };
    expect(Object.fromEntries(Object.keys(recommended).map((flag) => [flag, context[flag]]))).toEqual(expected);
    for (const [flag, pin] of Object.entries(PINNED)) {
      expect(recommended[flag], `${flag} is pinned against a recommendation: ${pin.reason}`).not.toEqual(pin.value);
    }
  });
});
