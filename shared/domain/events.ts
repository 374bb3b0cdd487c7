/**
 * events-list (contract §12): the account's change log, oldest first, followed with a cursor
 * that never expires while its position is retained. Every page reads the head first and then
 * only positions at or below it (docs/data-model.md, "The change log").
 */
import { eventRetentionSeconds, getEntry, type LogEntry, type LogView, queryEntries, readHead, secondOf, secondsFrom } from '../db/events.js';
import { ApiError } from '../errors.js';
import type { EventsListInput, EventsPage, LogEntryEvent } from '../schemas/events-list.js';
import type { OperationContext } from './context.js';
import { firstWhere, mergeAscending, pageOf, parsePosition } from './event-positions.js';
import { cursorScope } from './listing.js';

const DEFAULT_LIMIT = 25;

const expired = () => new ApiError('events.cursor_expired', 'the cursor\'s position is older than the retention window; re-sync from the lists and start again without a cursor');
const retained = (e: LogEntry | undefined, nowSeconds: number) => e !== undefined && e.ttl > nowSeconds;

/**
 * The first position appended at or after `time` (head + 1 when none is): the per-second markers
 * name the second, then a binary search within that second (append times never decrease).
 */
async function firstAppendedFrom(accountId: string, head: number, time: string): Promise<number> {
  const [m0, m1] = await secondsFrom(accountId, secondOf(time), 2);
  if (!m0 || m0.seq > head) return head + 1;
  if (m0.second > secondOf(time) || time.slice(19) === '.000Z') return m0.seq;
  const last = Math.min(head, (m1?.seq ?? head + 1) - 1);
  return firstWhere(m0.seq, last, async (seq) => ((await getEntry(accountId, seq))?.at ?? '') >= time);
}

/**
 * The first retained position: entries of one second share their `ttl`, so the second after
 * now − retention names it. The entry found is checked (one GetItem): had the retention setting
 * changed since older entries were written, a binary search on their `ttl` settles it.
 */
async function firstRetained(accountId: string, head: number, nowSeconds: number): Promise<number> {
  const candidate = await firstAppendedFrom(accountId, head, new Date((nowSeconds - eventRetentionSeconds() + 1) * 1000).toISOString());
  if (candidate > head || retained(await getEntry(accountId, candidate), nowSeconds)) return candidate;
  return firstWhere(candidate + 1, head, async (seq) => retained(await getEntry(accountId, seq), nowSeconds));
}

/** Where a request without a cursor starts (the position before its first event). */
async function startOf(accountId: string, head: number, since: string | undefined, nowSeconds: number): Promise<number> {
  if (head === 0) return 0;
  const [oldest, first] = await Promise.all([firstRetained(accountId, head, nowSeconds), since ? firstAppendedFrom(accountId, head, since) : 0]);
  return Math.max(oldest, first) - 1;
}

/**
 * The log's entries in [since, head], oldest first, page after page (webhooks-replay): the first
 * entry appended at or after `since`, then every later one; `stop` ends the walk early.
 */
export async function* entriesFrom(accountId: string, since: string, stop: (e: LogEntry) => boolean): AsyncGenerator<LogEntry> {
  const head = (await readHead(accountId)).seq;
  let after = await startOf(accountId, head, since, Math.floor(Date.now() / 1000));
  while (after < head) {
    const { entries } = await queryEntries(accountId, { kind: 'all' }, { after, upto: head }, { limit: 100 });
    if (entries.length === 0) return;
    for (const e of entries) {
      if (stop(e)) return;
      yield e;
    }
    after = entries[entries.length - 1]!.seq;
  }
}

export const toEvent = (e: LogEntry): LogEntryEvent => JSON.parse(e.body) as LogEntryEvent;

export async function listEvents(ctx: OperationContext, input: EventsListInput): Promise<EventsPage> {
  const types = input.types ?? [];
  const filters = { types, record_id: input.record_id ?? null };
  const { after, next } = await cursorScope(ctx, 'events', input.cursor, filters);
  const limit = input.limit ?? DEFAULT_LIMIT;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const { accountId } = ctx;

  // The head first: every position at or below it is committed, so reading (start, head] with
  // strongly consistent queries sees every event there and nothing is handed out beyond it.
  const head = (await readHead(accountId)).seq;
  let start: number;
  if (after !== undefined) {
    const position = parsePosition(after, head);
    if (position === undefined) throw new ApiError('events.invalid_cursor', 'cursor is invalid for this request');
    start = position;
  } else start = await startOf(accountId, head, input.since, nowSeconds);

  let entries: LogEntry[];
  let scannedTo: number | undefined;
  const range = { after: start, upto: head };
  if (input.record_id) {
    const view: LogView = { kind: 'record', recordId: input.record_id };
    ({ entries, scannedTo } = await queryEntries(accountId, view, range, { limit: limit + 1, maxRead: limit + 1, events: types }));
  } else if (types.length) {
    const chunk = Math.max(2, Math.ceil((limit + 1) / types.length));
    const sources = types.map((event) => async (from: number, n: number) => {
      const got = await queryEntries(accountId, { kind: 'type', event }, { after: from, upto: head }, { limit: n });
      return { entries: got.entries, done: got.scannedTo === undefined && got.entries.length < n };
    });
    entries = await mergeAscending(sources, start, limit + 1, chunk);
  } else {
    ({ entries } = await queryEntries(accountId, { kind: 'all' }, range, { limit: limit + 1 }));
  }

  // A cursor whose next event has been purged (or is past retention) is expired: the consumer
  // would silently miss events otherwise. The whole log's first entry answers it for free.
  if (after !== undefined && start < head) {
    const nextEntry = !input.record_id && !types.length && entries[0]?.seq === start + 1 ? entries[0] : await getEntry(accountId, start + 1);
    if (!retained(nextEntry, nowSeconds)) throw expired();
  }

  const page = pageOf(start, head, entries, limit, scannedTo);
  return { items: page.items.map(toEvent), next_cursor: next(String(page.next)), has_more: page.hasMore };
}
