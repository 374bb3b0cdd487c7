/**
 * Search with long words (contract §4): a query word of up to 32 characters reads only its true
 * matches, however many records share its first characters and whatever the account's size; a
 * query of several words reads the partition of its rarest word.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string; first_name: string };
type Page = { items: Rec[]; next_cursor: string };


let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
});
afterAll(async () => {
  await worker.stop();
});

const auth = newAccount();

/** Through contacts-batch-create (the same records and search entries as single creates, fewer calls). */
async function createAll(bodies: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 100) {
    const { results } = await ok<{ results: Array<{ ok: boolean }> }>('contacts-batch-create', { items: bodies.slice(i, i + 100) }, auth);
    expect(results.every((r) => r.ok)).toBe(true);
  }
  await worker.drain();
}

/** Similar records: every word shares all but its last few characters with a query word. */
const filler = (from: number, n: number) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const letter = String.fromCharCode(97 + (i % 25)); // a–y: never `verification123`, `…zz`, `…999`
    return {
      first_name: `Verification12${letter}${i} Verificationz${letter}${i} Reconciliation123abcdefghijkl${letter}${i}`,
      last_name: `Reconciliation99${letter}${i}`,
      job_title: 'Filler',
      // The oldest 40 share one more word: the rare one of a two-word query.
      ...(i < 40 ? { email: `scarcity${i}@x${i}.test` } : {}),
    };
  });

const LONG_QUERIES: Array<[string, string[]]> = [
  ['verification123', ['Verification123', 'verification123abc']],
  ['verificationzz', ['Verificationzz', 'verificationzz9']],
  ['reconciliation999', ['Reconciliation999', 'reconciliation9990']],
  ['reconciliation123abcdefghijklmno', ['reconciliation123abcdefghijklmnopqrs', 'Reconciliation123ABCDEFGHIJKLMNO']],
];

async function measure(search: string, limit = 25) {
  const { result, usage } = await measureCapacity(() => ok<Page>('contacts-list', { search, limit }, auth));
  return { names: result.items.map((r) => r.first_name).sort(), itemsRead: usage.itemsRead, rcu: usage.rcu };
}

describe('long query words read only their matches', () => {
  beforeAll(async () => {
    await createAll(filler(0, 50));
    await createAll(LONG_QUERIES.flatMap(([, names]) => names.map((first_name) => ({ first_name, last_name: 'Match' }))));
  }, 300_000);

  it('a 14–32 character word costs the same at 50 and 150 similar records', async () => {
    const small = new Map<string, Awaited<ReturnType<typeof measure>>>();
    for (const [q, names] of LONG_QUERIES) {
      const m = await measure(q);
      expect(m.names, q).toEqual([...names].sort());
      small.set(q, m);
    }
    await createAll(filler(50, 100));
    for (const [q, names] of LONG_QUERIES) {
      const m = await measure(q);
      expect(m.names, q).toEqual([...names].sort());
      // Two entries and two records (plus the page's meta), at either size.
      expect(m.itemsRead, q).toBe(small.get(q)!.itemsRead);
      expect(m.itemsRead, q).toBeLessThanOrEqual(2 + 2 + 2);
      expect(m.rcu, q).toBe(small.get(q)!.rcu);
    }
  }, 400_000);

  it('a query of several words reads the partition of its rarest word', async () => {
    // `verification` is in all 150 records (and the matches), `scarcity…` in the oldest 40: reading
    // the first word's partition newest first would walk ~110 records before the first match.
    const m = await measure('verification scarcity', 10);
    expect(m.names).toHaveLength(10);
    expect(m.names.every((n) => /^Verification12/.test(n))).toBe(true);
    // The rarest partition: one page of entries and records, probes and the two counters.
    expect(m.itemsRead).toBeLessThanOrEqual(60);
    // The word order does not matter.
    const swapped = await measure('scarcity verification', 10);
    expect(swapped.itemsRead).toBe(m.itemsRead);
  }, 60_000);
});
