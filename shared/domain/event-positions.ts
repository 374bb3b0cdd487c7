/**
 * The change log's position logic, pure (property-tested in test/unit/event-positions.test.ts).
 * A position is the number of the last event a consumer has seen; the log's events are numbered
 * 1, 2, 3, … per account with no gaps, and a reader only reads positions at or below the head it
 * read first (docs/data-model.md, "The change log").
 */

export interface Positioned {
  seq: number;
}

export interface PageAnswer<T> {
  items: T[];
  /** The position to continue after: never ahead of the head read, never behind the last item. */
  next: number;
  hasMore: boolean;
}

/**
 * A page from the entries read at positions in (start, upto] (ascending, all matching the
 * filters; at most limit + 1 of them). `scannedTo`: the read stopped at that position before
 * reaching `upto` (a bounded scan of a filtered view), so what lies beyond it is unknown.
 */
export function pageOf<T extends Positioned>(start: number, upto: number, entries: readonly T[], limit: number, scannedTo?: number): PageAnswer<T> {
  if (entries.length > limit) return { items: entries.slice(0, limit), next: entries[limit - 1]!.seq, hasMore: true };
  if (scannedTo !== undefined && scannedTo < upto) return { items: [...entries], next: Math.max(start, scannedTo), hasMore: true };
  return { items: [...entries], next: Math.max(start, upto), hasMore: false };
}

/** A source of ascending entries: the next at most `n` entries after position `after` (`done`: nothing after them). */
export type Source<T> = (after: number, n: number) => Promise<{ entries: T[]; done: boolean }>;

/**
 * The first `want` entries of the union of ascending sources (positions are unique across them),
 * reading each in chunks of `chunk`: a source is read again only when its buffer is empty and it
 * may still hold the next smallest entry, so reads stay within `want` plus one chunk per source.
 */
export async function mergeAscending<T extends Positioned>(sources: readonly Source<T>[], after: number, want: number, chunk: number): Promise<T[]> {
  const state = sources.map((read) => ({ read, buf: [] as T[], last: after, done: false }));
  const out: T[] = [];
  while (out.length < want) {
    await Promise.all(
      state
        .filter((s) => s.buf.length === 0 && !s.done)
        .map(async (s) => {
          const got = await s.read(s.last, chunk);
          s.buf = got.entries;
          s.done = got.done || got.entries.length === 0;
          if (got.entries.length) s.last = got.entries[got.entries.length - 1]!.seq;
        }),
    );
    let best: (typeof state)[number] | undefined;
    for (const s of state) if (s.buf.length && (!best || s.buf[0]!.seq < best.buf[0]!.seq)) best = s;
    if (!best) break;
    out.push(best.buf.shift()!);
  }
  return out;
}

/**
 * The smallest position in [lo, hi] where `holds` is true, for a predicate that is false then
 * true along positions (retention, append times); hi + 1 when it holds nowhere. log2 reads.
 */
export async function firstWhere(lo: number, hi: number, holds: (seq: number) => Promise<boolean>): Promise<number> {
  let a = lo;
  let b = hi + 1;
  while (a < b) {
    const mid = Math.floor((a + b) / 2);
    if (await holds(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}

/** A cursor's position must be a whole number no greater than the head. */
export function parsePosition(text: string, head: number): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= head ? n : undefined;
}
