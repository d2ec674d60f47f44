/**
 * The table layout is settled (issue 27): a change that would make CloudFormation replace a
 * table holding data fails here, naming the table and the property, until it comes with a
 * migration and the lock (test/infra/data-tables.lock.json) is updated on purpose.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockDifferences, migrationRequiredMessage, tableLockOf } from './table-lock.ts';
import type { TableLock } from './table-lock.ts';
import { synthesizeWithStandIns } from './stand-in-assets.ts';

const LOCK_PATH = 'test/infra/data-tables.lock.json';
const LOCK_FILE = fileURLToPath(new URL('./data-tables.lock.json', import.meta.url));
const UPDATE_VARIABLE = 'AEP_UPDATE_TABLE_LOCK';
const UPDATE_COMMAND = `${UPDATE_VARIABLE}=1 npx vitest run test/infra/data-tables-lock.test.ts`;

const readLock = (): TableLock => JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as TableLock;

/** Settings that could reach the tables; none may change their replacement-relevant properties. */
const SCENARIOS = { defaults: {}, production: { stage: 'prod', removalPolicy: 'retain', deletionProtection: 'true' }, destroy: { removalPolicy: 'destroy' } };
let current: Record<string, TableLock>;

beforeAll(() => {
  current = Object.fromEntries(Object.entries(SCENARIOS).map(([name, context]) => [name, tableLockOf(synthesizeWithStandIns(context, `AepRelay-${name}`).template)]));
  if (process.env[UPDATE_VARIABLE] === '1') {
    writeFileSync(LOCK_FILE, `${JSON.stringify(current.defaults, null, 2)}\n`);
    console.warn(`${LOCK_PATH} rewritten from the template: commit it with the migration it goes with`);
  }
}, 300_000);

describe('data-table lock', () => {
  it('holds every data table of the synthesized stack, in every scenario, exactly as locked', () => {
    const locked = readLock();
    expect(Object.keys(locked)).toHaveLength(3);
    for (const lock of Object.values(current)) {
      const differences = lockDifferences(locked, lock);
      if (differences.length > 0) throw new Error(migrationRequiredMessage(differences, LOCK_PATH, UPDATE_COMMAND));
    }
  });

  it('fails, saying a migration is required and how to update the lock, when a key schema, a table name, a local index or a logical id changes', () => {
    const locked = readLock();
    const [logicalId, table] = Object.entries(locked)[0]!;
    const changes: Array<[string, TableLock]> = [
      ['KeySchema', { ...locked, [logicalId]: { ...table, KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] } }],
      ['TableName', { ...locked, [logicalId]: { ...table, TableName: 'events' } }],
      ['LocalSecondaryIndexes', { ...locked, [logicalId]: { ...table, LocalSecondaryIndexes: [{ IndexName: 'byPosition' }] } }],
      ['gone from the template', Object.fromEntries(Object.entries(locked).map(([id, entry]) => [id === logicalId ? `${id}Renamed` : id, entry]))],
    ];
    for (const [what, current] of changes) {
      const differences = lockDifferences(locked, current);
      expect(differences.some((difference) => difference.startsWith(logicalId) && difference.includes(what))).toBe(true);
      const message = migrationRequiredMessage(differences, LOCK_PATH, UPDATE_COMMAND);
      expect(message).toContain('A migration is required');
      expect(message).toContain(UPDATE_COMMAND);
    }
  });

  it('leaves compatible changes out of the lock: a global index, billing, TTL and the stream update in place', () => {
    const lock = current.defaults!;
    for (const table of Object.values(lock)) {
      expect(Object.keys(table).sort()).toEqual(['AttributeDefinitions', 'KeySchema', 'LocalSecondaryIndexes', 'TableName']);
    }
    // The events table's global index (byActivity) and its key attributes are not locked.
    expect(JSON.stringify(lock)).not.toContain('activityPk');
  });
});
