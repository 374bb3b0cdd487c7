/**
 * Search (contract §4): results equal a brute-force filter of every record, and a rare query
 * reads about what a page needs, whatever the account's size and however many records share its
 * first characters.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { matchesQuery, parseQuery, recordWords } from '../../shared/search/tokenize.js';
import { newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string; created_at: string };
type Page = { items: Rec[]; next_cursor: string };


let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
});
afterAll(async () => {
  await worker.stop();
});

async function createAll(auth: ReturnType<typeof newAccount>, bodies: Record<string, unknown>[]): Promise<Rec[]> {
  const out: Rec[] = [];
  for (let i = 0; i < bodies.length; i += 20) out.push(...(await Promise.all(bodies.slice(i, i + 20).map((b) => ok<Rec>('contacts-create', b, auth)))));
  await worker.drain();
  return out;
}

async function searchAll(auth: ReturnType<typeof newAccount>, search: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '';
  do {
    const p = await ok<Page>('contacts-list', { search, limit: 7, ...(cursor ? { cursor } : {}) }, auth);
    ids.push(...p.items.map((r) => r.id));
    cursor = p.next_cursor;
  } while (cursor);
  return ids;
}

const newestFirst = (a: Rec, b: Rec) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);

describe('search equals a brute-force filter', () => {
  const auth = newAccount();
  let corpus: Rec[] = [];
  const stems = ['mar', 'margue', 'marguerite', 'postmaster', 'zoë', 'ångström'];

  beforeAll(async () => {
    const rand = fc.sample(
      fc.record({
        stem: fc.constantFrom(...stems),
        tail: fc.string({ unit: fc.constantFrom(...'abcdefghij0123456789'), maxLength: 8 }),
        last: fc.constantFrom('Smith', 'Smithson', 'Lovelace', 'Love'),
        n: fc.integer({ min: 0, max: 999 }),
      }),
      { numRuns: 60, seed: 42 },
    );
    corpus = await createAll(
      auth,
      rand.map((r, i) => ({ first_name: `${r.stem}${r.tail}`, last_name: r.last, email: `${r.stem.normalize("NFKD").replace(/\p{M}/gu, "")}${r.n}@example${i % 3}.com`, phone: `+1 (555) ${String(r.n).padStart(3, '0')}-${1000 + i}` })),
    );
    corpus.sort(newestFirst);
  });

  it('property: every query (short, long, rare, several words, phone digits) returns exactly the matching records, newest first', async () => {
    const corpusWords = [...new Set(corpus.flatMap((c) => [...recordWords({ text: [String(c.first_name), String(c.last_name)], emails: [String(c.email)] })]))];
    const query = fc.oneof(
      // prefixes of real words, any length (long ones are rare)
      fc.tuple(fc.constantFrom(...corpusWords), fc.integer({ min: 1, max: 20 })).map(([w, n]) => [...w].slice(0, n).join('')),
      // two words
      fc.tuple(fc.constantFrom(...corpusWords), fc.constantFrom('smi', 'love', 'lovelace', 'example1', 'x')).map(([a, b]) => `${a.slice(0, 9)} ${b}`),
      // words that match nothing, or only by their first characters
      fc.tuple(fc.constantFrom(...stems), fc.string({ unit: fc.constantFrom(...'xyz789'), minLength: 1, maxLength: 6 })).map(([s, t]) => `${s}${t}`),
      // phone digits
      fc.constantFrom('555', '(555) 0', '5551', '1000'),
    );
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const parsed = parseQuery(q, { exactEmail: true });
        const expected = corpus
          .filter((c) => parsed && matchesQuery(recordWords({ text: [String(c.first_name), String(c.last_name), String(c.company_name)], emails: [String(c.email)], phones: [String(c.phone)] }), parsed, String(c.email)))
          .map((c) => c.id);
        expect(await searchAll(auth, q), q).toEqual(expected);
      }),
      { numRuns: 25, seed: 7 },
    );
  }, 120_000);
});

describe('a rare query costs what a page costs, at any size', () => {
  it('reads the same number of items for a rare 11-character word at two account sizes', async () => {
    const auth = newAccount();
    // Two records carry the rare word; everyone else shares its first 6 (and 10) characters.
    await createAll(auth, [{ first_name: 'marguerite4x' }, { first_name: 'Marguerite4', last_name: 'Rare' }]);
    const filler = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ first_name: `marguerite${String.fromCharCode(97 + ((from + i) % 26))}${from + i}`, last_name: `margue${from + i}` }));
    await createAll(auth, filler(0, 40));
    const measure = async () => {
      const { result, usage } = await measureCapacity(() => ok<Page>('contacts-list', { search: 'marguerite4', limit: 25 }, auth));
      expect(result.items.map((r) => r.first_name).sort()).toEqual(['Marguerite4', 'marguerite4x']);
      return usage.itemsRead;
    };
    const small = await measure();
    await createAll(auth, filler(40, 160));
    const large = await measure();
    // The account grew five-fold; the rare query reads the same handful of items.
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(2 + 2 + 2);
    // A common word's page at the larger size costs at least as much as the rare query.
    const { usage } = await measureCapacity(() => ok<Page>('contacts-list', { search: 'margue', limit: 25 }, auth));
    expect(large).toBeLessThanOrEqual(usage.itemsRead);
  }, 120_000);
});
