/**
 * The data-table lock: of every `AWS::DynamoDB::Table` in a synthesized template, exactly the
 * properties whose change makes CloudFormation replace the table (a new, empty table; the old
 * one deleted, or orphaned under a retain policy): its logical id, `KeySchema`, `TableName` and
 * `LocalSecondaryIndexes` ("Update requires: Replacement" in the CloudFormation template
 * reference for AWS::DynamoDB::Table), with the `AttributeDefinitions` of the attributes those
 * keys name. Global indexes, billing, TTL, streams and every other property update in place and
 * are left out on purpose, so the lock moves only when data would have to move.
 *
 * Not a template snapshot (STYLE.md rules those out): it holds nothing a compatible change touches.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOfType } from './template-queries.ts';

export interface KeyElement {
  AttributeName: string;
  KeyType: string;
}

export interface AttributeDefinition {
  AttributeName: string;
  AttributeType: string;
}

export interface LockedTable {
  TableName: unknown;
  KeySchema: KeyElement[];
  AttributeDefinitions: AttributeDefinition[];
  LocalSecondaryIndexes: unknown[];
}

/** Locked tables by logical id. */
export type TableLock = Record<string, LockedTable>;

/** The lock of a synthesized template, keys in a stable order. */
export function tableLockOf(template: Template): TableLock {
  const tables = resourcesOfType(template, 'AWS::DynamoDB::Table');
  return Object.fromEntries(
    Object.entries(tables)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([logicalId, table]) => {
        const properties = table.Properties ?? {};
        const keySchema = (properties.KeySchema as KeyElement[] | undefined) ?? [];
        const localIndexes = (properties.LocalSecondaryIndexes as Array<{ KeySchema?: KeyElement[] }> | undefined) ?? [];
        const keyNames = new Set([...keySchema, ...localIndexes.flatMap((index) => index.KeySchema ?? [])].map((key) => key.AttributeName));
        const definitions = ((properties.AttributeDefinitions as AttributeDefinition[] | undefined) ?? [])
          .filter((definition) => keyNames.has(definition.AttributeName))
          .sort((a, b) => a.AttributeName.localeCompare(b.AttributeName));
        return [logicalId, { TableName: properties.TableName ?? null, KeySchema: keySchema, AttributeDefinitions: definitions, LocalSecondaryIndexes: localIndexes }];
      }),
  );
}

/** What differs between the committed lock and a template's, one line per table; empty when they agree. */
export function lockDifferences(locked: TableLock, current: TableLock): string[] {
  const differences: string[] = [];
  for (const [logicalId, table] of Object.entries(locked)) {
    const now = current[logicalId];
    if (now === undefined) {
      differences.push(`${logicalId}: gone from the template (a renamed construct changes the logical id): CloudFormation would delete the table, or orphan it under a retain policy`);
      continue;
    }
    for (const property of ['TableName', 'KeySchema', 'AttributeDefinitions', 'LocalSecondaryIndexes'] as const) {
      if (JSON.stringify(table[property]) !== JSON.stringify(now[property])) {
        differences.push(`${logicalId}: ${property} ${JSON.stringify(table[property])} -> ${JSON.stringify(now[property])}: CloudFormation would replace the table`);
      }
    }
  }
  for (const logicalId of Object.keys(current)) {
    if (!(logicalId in locked)) differences.push(`${logicalId}: a data table the lock does not hold (new, or an old one under a new logical id)`);
  }
  return differences;
}

/** The failure message: what changed, why it matters, and the two ways forward. */
export function migrationRequiredMessage(differences: readonly string[], lockPath: string, updateCommand: string): string {
  return [
    'The data tables changed in a way CloudFormation cannot apply in place; a deployed stack would lose or orphan the data they hold:',
    ...differences.map((difference) => `  - ${difference}`),
    'A migration is required. Either make the change compatible (new attributes and global indexes update in place),',
    'or ship it with a migration that moves the data (docs/deploy-and-upgrade.md "Upgrades and the table lock"), and then update the lock deliberately:',
    `  ${updateCommand}`,
    `and commit ${lockPath} with the migration.`,
  ].join('\n');
}
