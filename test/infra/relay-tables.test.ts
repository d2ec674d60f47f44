/**
 * The tables construct on its own (no bundles needed): the removal policy and deletion
 * protection it is given reach every table. The full stack test covers the retained case.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { RelayTables } from '../../infra/constructs/relay-tables.ts';
import { TABLE_DEFINITIONS } from '../../src/store/table-definitions.ts';
import { resourcesOfType } from './template-queries.ts';

describe('RelayTables', () => {
  it('deletes every table with the stack, unprotected, when asked to destroy', () => {
    const stack = new Stack(new App(), 'Tables');
    new RelayTables(stack, 'Tables', { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });
    const tables = Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(TABLE_DEFINITIONS.length);
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties?.DeletionProtectionEnabled).toBe(false);
    }
  });
});
