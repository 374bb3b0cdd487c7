/**
 * The change log's position logic (shared/domain/event-positions.ts), against a model of the log:
 * appenders commit k events at once (the head moves with them), readers read the head first and
 * then only positions at or below it, with any filter, limit and interleaving. A consumer that
 * follows next_cursor sees every matching event exactly once, in order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstWhere, mergeAscending, pageOf, type Source } from '../../shared/domain/event-positions.js';

interface Entry {
  seq: number;
  type: string;
  record: string;
}

const TYPES = ['a', 'b', 'c', 'd'];
const RECORDS = ['r1', 'r2', 'r3'];

/** The in-memory log: entries 1..head, committed in batches. */
class Log {
  entries: Entry[] = [];
  get head() {
    return this.entries.length;
  }
  commit(batch: Array<{ type: string; record: string }>) {
    for (const e of batch) this.entries.push({ seq: this.entries.length + 1, ...e });
  }
  /** A view's entries in (after, upto], at most n (a Query with Limit n); `reads` counts items read. */
  query(match: (e: Entry) => boolean, after: number, upto: number, n: number, reads: { n: number }): Entry[] {
    const out = this.entries.filter((e) => e.seq > after && e.seq <= upto && match(e)).slice(0, n);
    reads.n += out.length;
    return out;
  }
}

type Filter = { types: string[]; record?: string };

/** One events-list request, as shared/domain/events.ts runs it (the same pure functions, the model's storage). */
async function readPage(log: Log, filter: Filter, start: number, limit: number, reads: { n: number }) {
  const head = log.head; // read first
  if (filter.record) {
    // Bounded scan of the record's partition, filtered by name.
    const maxRead = filter.types.length ? 5 : limit + 1;
    const scanned = log.entries.filter((e) => e.seq > start && e.seq <= head && e.record === filter.record).slice(0, maxRead);
    reads.n += scanned.length;
    const more = log.entries.some((e) => e.seq > (scanned.at(-1)?.seq ?? head) && e.seq <= head && e.record === filter.record);
    const entries = scanned.filter((e) => !filter.types.length || filter.types.includes(e.type)).slice(0, limit + 1);
    return pageOf(start, head, entries, limit, scanned.length === maxRead && more ? scanned.at(-1)!.seq : undefined);
  }
  if (filter.types.length) {
    const sources: Source<Entry>[] = filter.types.map((t) => async (after, n) => {
      const got = log.query((e) => e.type === t, after, head, n, reads);
      return { entries: got, done: got.length < n };
    });
    const entries = await mergeAscending(sources, start, limit + 1, Math.max(2, Math.ceil((limit + 1) / filter.types.length)));
    return pageOf(start, head, entries, limit);
  }
  return pageOf(start, head, log.query(() => true, start, head, limit + 1, reads), limit);
}

const matches = (f: Filter) => (e: Entry) => (!f.types.length || f.types.includes(e.type)) && (!f.record || e.record === f.record);

const arbBatch = fc.array(fc.record({ type: fc.constantFrom(...TYPES), record: fc.constantFrom(...RECORDS) }), { minLength: 1, maxLength: 6 });
const arbStep = fc.oneof(fc.record({ commit: arbBatch }), fc.record({ read: fc.constant(true) }));
const arbFilter = fc.record({ types: fc.uniqueArray(fc.constantFrom(...TYPES), { maxLength: 3 }), record: fc.option(fc.constantFrom(...RECORDS), { nil: undefined }) });

describe('change log positions', () => {
  it('a consumer following next_cursor sees every matching event after its start exactly once, in order, under any interleaving of commits and reads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbStep, { maxLength: 40 }), arbFilter, fc.integer({ min: 1, max: 5 }), fc.nat({ max: 40 }), async (steps, filter, limit, startAt) => {
        const log = new Log();
        let begin: number | undefined;
        let position = 0;
        const seen: Entry[] = [];
        const reads = { n: 0 };
        const read = async () => {
          const page = await readPage(log, filter, position, limit, reads);
          expect(page.next).toBeGreaterThanOrEqual(position);
          expect(page.next).toBeLessThanOrEqual(log.head); // never ahead of the head
          if (page.items.length) expect(page.next).toBeGreaterThanOrEqual(page.items.at(-1)!.seq);
          seen.push(...page.items);
          position = page.next;
          return page;
        };
        for (const [i, step] of steps.entries()) {
          if (i === startAt) position = begin = log.head; // the consumer starts here (a cursor taken now)
          if ('commit' in step) log.commit(step.commit);
          else if (begin !== undefined) await read();
        }
        if (begin === undefined) position = begin = log.head;
        for (let guard = 0; guard < 1000 && (await read()).hasMore; guard++);
        const expected = log.entries.filter((e) => e.seq > begin! && matches(filter)(e));
        expect(seen.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
        expect(position).toBe(log.head);
      }),
      { numRuns: 300 },
    );
  });

  it('a consumer that starts before the first commit sees everything that matches', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbStep, { maxLength: 40 }), arbFilter, fc.integer({ min: 1, max: 4 }), async (steps, filter, limit) => {
        const log = new Log();
        let position = 0;
        const seen: Entry[] = [];
        const reads = { n: 0 };
        for (const step of [...steps, { read: true as const }]) {
          if ('commit' in step) log.commit(step.commit);
          else {
            for (;;) {
              const page = await readPage(log, filter, position, limit, reads);
              seen.push(...page.items);
              position = page.next;
              if (!page.hasMore) break;
            }
          }
        }
        expect(seen.map((e) => e.seq)).toEqual(log.entries.filter(matches(filter)).map((e) => e.seq));
      }),
      { numRuns: 300 },
    );
  });

  it('mergeAscending returns the smallest entries of the union and reads at most one chunk per source beyond them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(0, 1, 2, 3), { maxLength: 200 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 10 }), fc.nat({ max: 50 }), async (owners, k, want, chunk, after) => {
        const all = owners.map((o, i) => ({ seq: i + 1, owner: o % k }));
        let read = 0;
        const sources: Source<{ seq: number; owner: number }>[] = Array.from({ length: k }, (_, s) => async (from, n) => {
          const got = all.filter((e) => e.owner === s && e.seq > from).slice(0, n);
          read += got.length;
          return { entries: got, done: got.length < n };
        });
        const out = await mergeAscending(sources, after, want, chunk);
        expect(out.map((e) => e.seq)).toEqual(all.filter((e) => e.seq > after).slice(0, want).map((e) => e.seq));
        expect(read).toBeLessThanOrEqual(want + k * chunk);
      }),
    );
  });

  it('firstWhere finds the first position of a monotonic predicate in log2 reads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 10_002 }), async (hi, threshold) => {
        let reads = 0;
        const got = await firstWhere(1, hi, async (seq) => {
          reads++;
          return seq >= threshold;
        });
        expect(got).toBe(Math.min(Math.max(threshold, 1), hi + 1));
        expect(reads).toBeLessThanOrEqual(Math.ceil(Math.log2(hi + 1)) + 1);
      }),
    );
  });

  it('pageOf never hands out a position beyond the head or behind its last item', () => {
    fc.assert(
      fc.property(fc.nat({ max: 100 }), fc.nat({ max: 100 }), fc.integer({ min: 1, max: 10 }), fc.option(fc.nat({ max: 100 }), { nil: undefined }), (start, extra, limit, scanned) => {
        const upto = start + extra;
        const entries = Array.from({ length: Math.min(extra, limit + 1) }, (_, i) => ({ seq: start + 1 + i }));
        const scannedTo = scanned === undefined ? undefined : Math.min(upto, start + scanned);
        const page = pageOf(start, upto, entries.filter((e) => scannedTo === undefined || e.seq <= scannedTo), limit, scannedTo);
        expect(page.next).toBeGreaterThanOrEqual(start);
        expect(page.next).toBeLessThanOrEqual(upto);
        if (entries.length > limit && (scannedTo === undefined || scannedTo >= upto)) expect(page.next).toBe(page.items.at(-1)!.seq);
        if (!page.hasMore) expect(page.next).toBe(upto);
        expect(page.items.length).toBeLessThanOrEqual(limit);
      }),
    );
  });
});
