import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CATEGORIES,
  isAgentScopedType,
  isCategory,
  isCommandType,
  isForeignEmitterType,
  isFrameType,
  isWellFormedType,
  parseType,
  typeCategory,
  typeScope,
} from '../../src/protocol/type-grammar.ts';
import type { TypeScope } from '../../src/protocol/type-grammar.ts';
import { readTypeRegistry, reportCorpus, schemasDir } from '../support/aep-corpus.ts';

describe('parseType', () => {
  const wellFormed: Array<[type: string, category: string, rest: string[], vendor: string | undefined, scope: TypeScope]> = [
    ['tool.completed', 'tool', ['completed'], undefined, 'session'],
    ['run.step.started', 'run', ['step', 'started'], undefined, 'session'],
    ['agent.heartbeat', 'agent', ['heartbeat'], undefined, 'agent'],
    ['control.cancel', 'control', ['cancel'], undefined, 'command'],
    ['control.attention.respond', 'control', ['attention', 'respond'], undefined, 'command'],
    ['control.pause', 'control', ['pause'], undefined, 'command'],
    ['control.resume', 'control', ['resume'], undefined, 'command'],
    ['control.accepted', 'control', ['accepted'], undefined, 'session'],
    ['control.rejected', 'control', ['rejected'], undefined, 'session'],
    ['attention.routed', 'attention', ['routed'], undefined, 'foreign'],
    ['attention.requested', 'attention', ['requested'], undefined, 'session'],
    ['message.user.submitted', 'message', ['user', 'submitted'], undefined, 'session'],
    ['tool.exploded_2', 'tool', ['exploded_2'], undefined, 'session'],
    ['x.claude-code.session.config_change', 'session', ['config_change'], 'claude-code', 'session'],
    ['x.acme.control.reboot', 'control', ['reboot'], 'acme', 'command'],
    ['x.acme.control.reboot.now', 'control', ['reboot', 'now'], 'acme', 'command'],
    // The envelope schema scopes by a literal `agent.` prefix, so vendor agent types are session-scoped.
    ['x.acme.agent.ping', 'agent', ['ping'], 'acme', 'session'],
    ['x.acme.widget.spun', 'widget', ['spun'], 'acme', 'session'],
    ['x.a_b-c.tool.x', 'tool', ['x'], 'a_b-c', 'session'],
  ];

  it.each(wellFormed)('parses %s', (type, category, rest, vendor, scope) => {
    const result = parseType(type);
    expect(result).toEqual({
      ok: true,
      parsed: vendor === undefined ? { type, category, rest, scope } : { type, vendor, category, rest, scope },
    });
    expect(isWellFormedType(type)).toBe(true);
    expect(typeCategory(type)).toBe(category);
  });

  const malformed: Array<[type: unknown, rule: string]> = [
    ['tool', 'AEP-0001 §6'],
    ['', 'AEP-0001 §6'],
    ['tool.', 'AEP-0001 §6'],
    ['.tool', 'AEP-0001 §6'],
    ['tool..completed', 'AEP-0001 §6'],
    ['tool.Completed', 'AEP-0001 §6'],
    ['Tool.completed', 'AEP-0001 §6'],
    ['tool.com-pleted', 'AEP-0001 §6'],
    ['tool.completed ', 'AEP-0001 §6'],
    ['tool.complété', 'AEP-0001 §6'],
    ['x.acme.foo', 'AEP-0001 §6'],
    ['x.acme', 'AEP-0001 §6'],
    ['x', 'AEP-0001 §6'],
    ['x..tool.completed', 'AEP-0001 §6'],
    ['x.Acme.tool.completed', 'AEP-0001 §6'],
    ['x.acme.to-ol.completed', 'AEP-0001 §6'],
    ['x.acme.tool.Completed', 'AEP-0001 §6'],
    [42, 'AEP-0001 §6'],
    [null, 'AEP-0001 §6'],
    ['banana.peeled', 'AEP-0002 §3'],
    ['custom.thing', 'AEP-0002 §3'],
    ['hello_world.x', 'AEP-0002 §3'],
  ];

  it.each(malformed)('rejects %j under %s', (type, rule) => {
    const result = parseType(type);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.rule).toBe(rule);
      expect(result.message.length).toBeGreaterThan(0);
    }
    expect(isWellFormedType(type)).toBe(false);
    expect(typeCategory(type)).toBeUndefined();
  });

  it('keeps messages short for huge inputs', () => {
    const result = parseType(`Tool.${'a'.repeat(1_000_000)}`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message.length).toBeLessThan(200);
  });
});

describe('scope predicates', () => {
  const cases: Array<[type: unknown, agent: boolean, command: boolean, foreign: boolean]> = [
    ['agent.presence', true, false, false],
    ['session.started', false, false, false],
    ['control.cancel', false, true, true],
    ['control.attention.respond', false, true, true],
    ['x.vendor.control.reset', false, true, true],
    ['control.accepted', false, false, false],
    ['control.cancel.now', false, false, false],
    ['attention.routed', false, false, true],
    ['attention.routed.again', false, false, false],
    ['x.acme.attention.routed', false, false, false],
    ['x.acme.agent.ping', false, false, false],
    [undefined, false, false, false],
    [7, false, false, false],
  ];

  it.each(cases)('classifies %j', (type, agent, command, foreign) => {
    expect(isAgentScopedType(type)).toBe(agent);
    expect(isCommandType(type)).toBe(command);
    expect(isForeignEmitterType(type)).toBe(foreign);
  });

  it('classifies strings that are not well-formed the way the envelope schema does', () => {
    expect(typeScope('agent.Bad')).toBe('agent');
    expect(typeScope('tool')).toBe('session');
    expect(typeScope({})).toBe('session');
  });
});

describe('isFrameType', () => {
  it.each([
    ['hello', true],
    ['subscribe', true],
    ['replay-exhausted', true],
    ['tool.completed', false],
    ['x.acme.tool.done', false],
    ['', false],
    [undefined, false],
    [3, false],
  ] as Array<[unknown, boolean]>)('%j → %s', (type, expected) => {
    expect(isFrameType(type)).toBe(expected);
  });
});

describe('the official registry', () => {
  it('names the same thirteen categories', () => {
    const file = join(schemasDir(), 'registry', 'categories.json');
    const registry = JSON.parse(readFileSync(file, 'utf8')) as { categories: Array<{ name: string; scope: string }> };
    const names = registry.categories.map((category) => category.name).filter((name) => name !== 'x');
    expect([...CATEGORIES].sort()).toEqual([...names].sort());
    for (const name of names) expect(isCategory(name)).toBe(true);
    expect(isCategory('x')).toBe(false);
    for (const category of registry.categories) {
      if (category.scope === 'agent') expect(isAgentScopedType(`${category.name}.anything`)).toBe(true);
    }
  });

  it('parses every registered type with the scope the registry records', () => {
    const types = readTypeRegistry();
    for (const entry of types) {
      const result = parseType(entry.type);
      expect(result.ok, entry.type).toBe(true);
      // The registry folds attention.routed into `session`; it is foreign-emitter by AEP-0002 §7.3.
      const expected = entry.type === 'attention.routed' ? 'foreign' : entry.scope;
      expect(typeScope(entry.type), entry.type).toBe(expected);
    }
    reportCorpus('registry types', types.length);
  });
});
