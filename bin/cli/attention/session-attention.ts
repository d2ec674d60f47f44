/**
 * A session's attention requests, read from its stored history (`GET /history`, every page) and
 * folded by the console's own `AttentionBook` (AEP-0002 §7: open from `attention.requested`
 * until `attention.resolved` or `attention.timeout` names it in `subject`). History, not the
 * replay buffer, so a request older than the replay window is still found.
 */
import { AttentionBook } from '../../../console/src/attention.ts';
import type { AepObject } from '../../../console/src/attention.ts';
import type { HistorySource } from '../export/history-source.ts';

/** The history filter (AEP-0003 §6 attr-match): the attention lifecycle only. */
const ATTENTION_EVENTS = JSON.stringify({ type: ['attention.*'] });

export async function attentionOfSession(source: HistorySource, session: string): Promise<AttentionBook> {
  const book = new AttentionBook();
  const limit = '1000';
  let params: Record<string, string> = { session, limit, filter: ATTENTION_EVENTS };
  for (;;) {
    const page = await source.page(params);
    for (const line of page.lines) book.apply(JSON.parse(line) as AepObject);
    if (page.next === undefined) return book;
    params = { cursor: page.next, limit };
  }
}
