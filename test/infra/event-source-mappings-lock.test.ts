/**
 * The event source mappings are settled (issue 47): a change that would make CloudFormation
 * replace a mapping (a new logical id, another stream or queue, another starting position) fails
 * a deployed stack's update ("mapping already exists", event-source-mapping-lock.ts), so it fails
 * here first, naming the mapping and the property, until it is shipped as two deploys and the
 * lock (test/infra/event-source-mappings.lock.json) is updated on purpose. Mirrors the data-table
 * lock (data-tables-lock.test.ts).
 *
 * A mapping's logical id holds its stack's name (`FunctionsFanoutDynamoDBEventSourceAepRelaydev…`),
 * so the lock is the `dev` stage's; every stage's ids come from the same construct paths.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_SCENARIOS } from '../../infra/template-scenarios.ts';
import { LOCKED_MAPPING_PROPERTIES, mappingLockDifferences, mappingLockOf, mappingReplacementMessage } from './event-source-mapping-lock.ts';
import type { MappingLock } from './event-source-mapping-lock.ts';
import { synthesizeWithStandIns } from './stand-in-assets.ts';

const LOCK_PATH = 'test/infra/event-source-mappings.lock.json';
const LOCK_FILE = fileURLToPath(new URL('./event-source-mappings.lock.json', import.meta.url));
const UPDATE_VARIABLE = 'AEP_UPDATE_MAPPING_LOCK';
const UPDATE_COMMAND = `${UPDATE_VARIABLE}=1 npx vitest run test/infra/event-source-mappings-lock.test.ts`;

const readLock = (): MappingLock => JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as MappingLock;

let current: Record<string, MappingLock>;

beforeAll(() => {
  // Every scenario at the locked stage: what settings may change, the lock must not.
  current = Object.fromEntries(Object.entries(TEMPLATE_SCENARIOS).map(([name, context]) => [name, mappingLockOf(synthesizeWithStandIns({ ...context, stage: 'dev' }, 'AepRelay-dev').template)]));
  if (process.env[UPDATE_VARIABLE] === '1') {
    writeFileSync(LOCK_FILE, `${JSON.stringify(current.defaults, null, 2)}\n`);
    console.warn(`${LOCK_PATH} rewritten from the template: commit it with the two-deploy change it goes with`);
  }
}, 300_000);

describe('event source mapping lock', () => {
  it('holds every mapping of the synthesized stack (fan-out, bridges, sink retry, deadlines), in every scenario, exactly as locked', () => {
    const locked = readLock();
    expect(Object.values(locked).map((mapping) => mapping.FunctionName).sort()).toEqual([
      expect.stringMatching(/^FunctionsBridges/),
      expect.stringMatching(/^FunctionsDeadline/),
      expect.stringMatching(/^FunctionsFanout/),
      expect.stringMatching(/^FunctionsSinkretry/),
    ]);
    for (const [scenario, lock] of Object.entries(current)) {
      const differences = mappingLockDifferences(locked, lock);
      if (differences.length > 0) throw new Error(`${scenario}:\n${mappingReplacementMessage(differences, LOCK_PATH, UPDATE_COMMAND)}`);
    }
  });

  it('fails, saying the deploy would fail and how to update the lock, when a starting position, a stream, a function or a logical id changes', () => {
    const locked = readLock();
    const [logicalId, mapping] = Object.entries(locked).find(([, candidate]) => candidate.StartingPosition === 'TRIM_HORIZON')!;
    const changes: Array<[string, MappingLock]> = [
      ['StartingPosition', { ...locked, [logicalId]: { ...mapping, StartingPosition: 'LATEST' } }],
      ['EventSourceArn', { ...locked, [logicalId]: { ...mapping, EventSourceArn: 'TablesEventsReplaced.StreamArn' } }],
      ['FunctionName', { ...locked, [logicalId]: { ...mapping, FunctionName: 'FunctionsSocketE2E50B97' } }],
      ['gone from the template', Object.fromEntries(Object.entries(locked).map(([id, entry]) => [id === logicalId ? `${id}Renamed` : id, entry]))],
    ];
    for (const [what, changed] of changes) {
      const differences = mappingLockDifferences(locked, changed);
      expect(differences.some((difference) => difference.startsWith(logicalId) && difference.includes(what)), what).toBe(true);
      const message = mappingReplacementMessage(differences, LOCK_PATH, UPDATE_COMMAND);
      expect(message).toContain('mapping already exists');
      expect(message).toContain(UPDATE_COMMAND);
    }
    // A renamed mapping is also one the lock does not hold.
    expect(mappingLockDifferences(locked, changes[3]![1])).toContain(`${logicalId}Renamed: a mapping the lock does not hold (new, or an old one under a new logical id)`);
  });

  it('leaves what updates in place out of the lock: batch size, retries, record age, filters and destinations', () => {
    for (const mapping of Object.values(current.defaults!)) expect(Object.keys(mapping)).toEqual([...LOCKED_MAPPING_PROPERTIES]);
    expect(JSON.stringify(current.defaults)).not.toMatch(/BatchSize|MaximumRetryAttempts|FilterCriteria|DestinationConfig/);
  });
});
