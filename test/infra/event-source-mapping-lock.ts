/**
 * The event source mapping lock: of every `AWS::Lambda::EventSourceMapping` in a synthesized
 * template, what decides whether CloudFormation replaces it: its logical id, and the properties
 * the template reference marks "Update requires: Replacement" that the relay's mappings set,
 * `EventSourceArn`, `StartingPosition` and `StartingPositionTimestamp`; with `FunctionName`, the
 * other half of the pair Lambda keeps unique.
 *
 * Why a replacement fails: Lambda allows one mapping per function and event source (a stream or a
 * queue), and CloudFormation creates the replacement before it deletes the old mapping, so the
 * create fails with ResourceConflictException ("The event source arn … and function … provided
 * mapping already exists"; for a queue "An event source mapping with SQS arn … already exists")
 * and the deploy rolls back. A new logical id is the same create-then-delete. (`FunctionName` updates in place, but a
 * mapping moved to another function is a different pair, so the lock holds it too.) Batch size,
 * retries, filters, destinations and the rest update in place and are left out, so the lock moves
 * only when a deploy would fail.
 *
 * Not a template snapshot (STYLE.md rules those out): it holds nothing a compatible change touches.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { logicalIdsIn, resourcesOfType } from './template-queries.ts';

export interface LockedMapping {
  /** The logical id of the function the mapping invokes. */
  FunctionName: string;
  /** The event source, as the logical id and attribute it is read from (`TablesEvents….StreamArn`). */
  EventSourceArn: string;
  StartingPosition: string | null;
  StartingPositionTimestamp: number | null;
}

/** Locked mappings by logical id. */
export type MappingLock = Record<string, LockedMapping>;

/** The properties compared, in the order differences are reported. */
export const LOCKED_MAPPING_PROPERTIES = ['FunctionName', 'EventSourceArn', 'StartingPosition', 'StartingPositionTimestamp'] as const;

/** The lock of a synthesized template, keys in a stable order. */
export function mappingLockOf(template: Template): MappingLock {
  const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping');
  return Object.fromEntries(
    Object.entries(mappings)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([logicalId, mapping]) => {
        const properties = mapping.Properties ?? {};
        return [
          logicalId,
          {
            FunctionName: referenceOf(properties.FunctionName),
            EventSourceArn: referenceOf(properties.EventSourceArn),
            StartingPosition: (properties.StartingPosition as string | undefined) ?? null,
            StartingPositionTimestamp: (properties.StartingPositionTimestamp as number | undefined) ?? null,
          },
        ];
      }),
  );
}

/** `Id` for `{ Ref: Id }`, `Id.Attr` for `{ Fn::GetAtt: [Id, Attr] }`, the JSON of anything else. */
function referenceOf(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return getAtt.join('.');
    const [id] = logicalIdsIn(value);
    if ('Ref' in value && id !== undefined) return id;
  }
  return JSON.stringify(value);
}

/** What differs between the committed lock and a template's, one line per change; empty when they agree. */
export function mappingLockDifferences(locked: MappingLock, current: MappingLock): string[] {
  const differences: string[] = [];
  for (const [logicalId, mapping] of Object.entries(locked)) {
    const now = current[logicalId];
    if (now === undefined) {
      differences.push(`${logicalId}: gone from the template (a renamed construct, function or table changes the logical id): CloudFormation would create its replacement before deleting it`);
      continue;
    }
    for (const property of LOCKED_MAPPING_PROPERTIES) {
      if (JSON.stringify(mapping[property]) !== JSON.stringify(now[property])) {
        differences.push(`${logicalId}: ${property} ${JSON.stringify(mapping[property])} -> ${JSON.stringify(now[property])}: CloudFormation would replace the mapping`);
      }
    }
  }
  for (const logicalId of Object.keys(current)) {
    if (!(logicalId in locked)) differences.push(`${logicalId}: a mapping the lock does not hold (new, or an old one under a new logical id)`);
  }
  return differences;
}

/** The failure message: what changed, why the deploy would fail, and the way forward. */
export function mappingReplacementMessage(differences: readonly string[], lockPath: string, updateCommand: string): string {
  return [
    'The event source mappings changed in a way CloudFormation applies by replacing them:',
    ...differences.map((difference) => `  - ${difference}`),
    'Lambda allows one mapping per function and event source, and CloudFormation creates the new mapping before deleting the old,',
    'so a deployed stack fails this update with "mapping already exists" and rolls back.',
    'Either make the change in place (batch size, retries, filters and destinations update in place),',
    'or ship it as two deploys, the first removing the mapping and the second adding the new one (docs/deploy-and-upgrade.md "Upgrades and the mapping lock"),',
    'and then update the lock deliberately:',
    `  ${updateCommand}`,
    `and commit ${lockPath} with that change.`,
  ].join('\n');
}
