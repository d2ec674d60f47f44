import { describe, expect, it } from 'vitest';
import { eventLog, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';

describe('history pages in the store', () => {
  it('cuts a page at its byte budget and continues right after it, every event once, both directions', async () => {
    const log = eventLog();
    const tenant = uniqueName('reader');
    const session = uniqueName('bytes');
    const texts = Array.from({ length: 10 }, (_, seq) => JSON.stringify(sessionEvent(session, seq)));
    for (const raw of texts) await log.append(tenant, { event: JSON.parse(raw), raw });
    const size = Buffer.byteLength(texts[0] as string, 'utf8');
    for (const order of ['asc', 'desc'] as const) {
      const read: string[] = [];
      const pageSizes: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await log.historyPage(tenant, session, { order }, { limit: 100, maxBytes: size * 3 + 2 }, cursor);
        read.push(...page.items.map((item) => item.raw));
        pageSizes.push(page.items.length);
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(read).toEqual(order === 'asc' ? texts : [...texts].reverse());
      expect(pageSizes).toEqual([3, 3, 3, 1]);
    }
  });

  it('reads at most limit items per page, bounds exclusive', async () => {
    const log = eventLog();
    const tenant = uniqueName('reader');
    const session = uniqueName('limit');
    const texts = Array.from({ length: 6 }, (_, seq) => JSON.stringify(sessionEvent(session, seq)));
    for (const raw of texts) await log.append(tenant, { event: JSON.parse(raw), raw });
    const first = await log.historyPage(tenant, session, { order: 'asc', after: { epoch: 0, seq: 0 }, before: { epoch: 0, seq: 5 } }, { limit: 2, maxBytes: 1 << 20 });
    expect(first.items.map((item) => item.raw)).toEqual(texts.slice(1, 3));
    const second = await log.historyPage(tenant, session, { order: 'asc', after: { epoch: 0, seq: 0 }, before: { epoch: 0, seq: 5 } }, { limit: 2, maxBytes: 1 << 20 }, first.cursor);
    expect(second.items.map((item) => item.raw)).toEqual(texts.slice(3, 5));
    // Pages of one, both ways, bounded on both sides, end.
    for (const order of ['asc', 'desc'] as const) {
      const read: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await log.historyPage(tenant, session, { order, after: { epoch: 0, seq: 0 }, before: { epoch: 0, seq: 5 } }, { limit: 1, maxBytes: 1 << 20 }, cursor);
        read.push(...page.items.map((item) => item.raw));
        cursor = page.cursor;
        pages += 1;
      } while (cursor !== undefined && pages < 20);
      expect(read).toEqual(order === 'asc' ? texts.slice(1, 5) : texts.slice(1, 5).reverse());
    }
  });
});
