/**
 * Names that must be unique in the whole account, not only in the region: CloudFront is a global
 * service, so its response headers policies and origin access controls share one namespace for
 * every region's stacks. CDK's generated name (the construct path and a hash) is the same for the
 * same stage in two regions, and the second region's deploy would fail on it; with the stack's
 * region in front it is not. (CloudFront Functions need no help: CDK already puts the region in
 * their names.)
 */
import { Names, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The longest names CloudFront takes (CloudFront API reference: OriginAccessControlConfig, ResponseHeadersPolicyConfig). */
export const CLOUDFRONT_NAME_LENGTHS = { originAccessControl: 64, responseHeadersPolicy: 128 } as const;

/** Room kept for the region: the longest region code is 15 characters (`us-isof-south-1`), and a hyphen. */
const REGION_ROOM = 16;

/**
 * `{region}-{unique name of scope}{id}`, at most `maxLength` characters, for the resource `id`
 * about to be created under `scope`. The region is the stack's: a literal for a stack with an
 * environment, `AWS::Region` otherwise.
 */
export function accountUniqueName(scope: IConstruct, id: string, maxLength: number): string {
  const local = Names.uniqueResourceName(scope, { maxLength: maxLength - REGION_ROOM - id.length });
  return `${Stack.of(scope).region}-${local}${id}`;
}
