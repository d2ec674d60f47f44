import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliverySamples, emitTimeOf, parseSamples, standInPoster, standInPosterFromEnv, STANDIN_VARIABLES } from '../../local/stand-in-poster.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-stand-in-test-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const eventText = (emitMs: number | string) => `{"aep":"0.1","id":"e1","type":"progress.status","data":{"phase":"working","benchEmitMs":${emitMs}},"seq":3}`;

describe('emitTimeOf', () => {
  it('reads the emit mark the bench writes into the event data, fractional ms included', () => {
    expect(emitTimeOf(eventText(1764650000123.45))).toBe(1764650000123.45);
    expect(emitTimeOf(eventText(17))).toBe(17);
  });

  it('answers undefined for a text without the mark or with no number after it', () => {
    expect(emitTimeOf('{"aep":"0.1","data":{"phase":"working"}}')).toBeUndefined();
    expect(emitTimeOf('{"data":{"benchEmitMs":"soon"}}')).toBeUndefined();
  });
});

describe('DeliverySamples', () => {
  it('records one line per delivery with an emit time, and drains each line once', () => {
    const samples = new DeliverySamples();
    samples.record(1000, 1020.126);
    samples.record(undefined, 1021);
    samples.record(1000.5, 1041);
    expect(samples.count).toBe(2);
    expect(samples.drain()).toBe('1000 1020.13\n1000.5 1041\n');
    expect(samples.drain()).toBe('');
    expect(parseSamples('1000 1020.13\n1000.5 1041\n')).toEqual([
      { emitMs: 1000, doneMs: 1020.13 },
      { emitMs: 1000.5, doneMs: 1041 },
    ]);
  });

  it('refuses a line that is not a sample', () => {
    expect(() => parseSamples('1000 1020\ngarbage\n')).toThrow(/not a delivery sample/);
  });
});

describe('standInPoster', () => {
  it('waits the round trip, answers sent, and appends each delivery to its file at flush', async () => {
    const file = join(tempDir(), 'lane1-42.samples');
    let clock = 5000;
    const poster = standInPoster({ postMs: 5, file, now: () => clock, flushEveryMs: 60_000 });
    expect(readFileSync(file, 'utf8')).toBe('');
    const started = performance.now();
    const outcome = await poster.post('conn-1', eventText(4990), { attempts: 1 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(4);
    expect(outcome).toBe('sent');
    clock = 5007.5;
    await poster.post('conn-2', eventText(4990));
    await poster.post('conn-3', '{"type":"closing","reason":"backpressure"}');
    expect(readFileSync(file, 'utf8')).toBe('');
    poster.flush();
    expect(parseSamples(readFileSync(file, 'utf8'))).toEqual([
      { emitMs: 4990, doneMs: 5000 },
      { emitMs: 4990, doneMs: 5007.5 },
    ]);
    poster.flush();
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    expect(await poster.isOpen('anything')).toBe(true);
    await expect(poster.close('anything')).resolves.toBeUndefined();
  });
});

describe('standInPosterFromEnv', () => {
  it('is off without its variables', () => {
    expect(standInPosterFromEnv({}, 'fanout')).toBeUndefined();
  });

  it('names its file after the label and this process, in the folder given', () => {
    const dir = tempDir();
    const poster = standInPosterFromEnv({ [STANDIN_VARIABLES.postMs]: '20', [STANDIN_VARIABLES.logDir]: dir }, 'fanout');
    expect(poster).toBeDefined();
    expect(readdirSync(dir)).toEqual([`fanout-${process.pid}.samples`]);
  });

  it('refuses a round trip without a folder, and a round trip that is not a number', () => {
    expect(() => standInPosterFromEnv({ [STANDIN_VARIABLES.postMs]: '20' }, 'fanout')).toThrow(STANDIN_VARIABLES.logDir);
    expect(() => standInPosterFromEnv({ [STANDIN_VARIABLES.postMs]: 'fast', [STANDIN_VARIABLES.logDir]: tempDir() }, 'fanout')).toThrow(/non-negative/);
  });
});
