import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../../shared/db/client.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';
import type { AuthContext } from '../../shared/http/operation.js';

type Rec = Record<string, unknown> & { id: string; created_at: string; tags: string[] };
type Page = { items: Rec[]; next_cursor: string };

async function walk(op: string, body: Record<string, unknown>, auth: AuthContext, limit: number): Promise<Rec[][]> {
  const pages: Rec[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const p = await ok<Page>(op, { ...body, limit, ...(cursor ? { cursor } : {}) }, auth);
    pages.push(p.items);
    if (!p.next_cursor) return pages;
    cursor = p.next_cursor;
  }
  throw new Error('too many pages');
}

// Search entries are written by the stream worker (contract §4: search may lag a write by up to
// 2 s locally): searches here run after it has drained.
let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
});
afterAll(async () => {
  await worker.stop();
});

const order = (a: Rec, b: Rec) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);

describe('lists, filters and search', () => {
  const auth = newAccount();
  const all: Rec[] = [];
  const companies: Rec[] = [];
  const sources: Rec[] = [];
  const names = ['Ana', 'Bob', 'Chloé', 'Dmitri', 'Émile', 'Fatima', 'Gus', 'Hana'];

  beforeAll(async () => {
    for (const n of ['Acme', 'Globex', 'Initech']) companies.push(await ok<Rec>('companies-create', { name: `${n} Corp`, domain: `${n.toLowerCase()}.com`, tags: n === 'Acme' ? ['partner'] : [] }, auth));
    for (const n of ['Web', 'Referral']) sources.push(await ok<Rec>('sources-create', { name: n }, auth));
    for (let i = 0; i < 40; i++) {
      const tags = [['vip', 'lead', 'churn'][i % 3]!, ...(i % 4 === 0 ? ['eu'] : [])];
      all.push(
        await ok<Rec>('contacts-create', {
          first_name: names[i % names.length],
          last_name: `Tester${i}`,
          email: `user${i}@${['acme', 'globex', 'initech'][i % 3]}.com`,
          phone: `+1 (555) ${String(100 + i).padStart(3, '0')}-${String(1000 + i)}`,
          company_id: i % 5 === 4 ? null : companies[i % 3]!.id,
          source_id: i % 2 ? sources[i % 2]!.id : null,
          tags,
        }, auth),
      );
    }
    all.sort(order);
    await worker.drain();
  }, 180_000); // seeds the file's records and waits for their search entries: minutes on a loaded 2-core machine

  it('lists newest first, full pages, no empty trailing page, every record once (any limit)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 45 }), async (limit) => {
        const pages = await walk('contacts-list', {}, auth, limit);
        expect(pages.flat().map((r) => r.id)).toEqual(all.map((r) => r.id));
        pages.slice(0, -1).forEach((p) => expect(p).toHaveLength(limit));
        expect(pages.at(-1)!.length).toBeGreaterThan(0);
      }),
      { numRuns: 8 },
    );
  });

  it('defaults to 25 and validates limit and cursor', async () => {
    const p = await ok<Page>('contacts-list', {}, auth);
    expect(p.items).toHaveLength(25);
    expect(p.next_cursor).not.toBe('');
    for (const limit of [0, 101, 2.5, '10', -1]) expect((await invoke('contacts-list', { limit }, auth)).body.error?.code).toBe('contacts.invalid_request');
    expect((await invoke('contacts-list', { cursor: 'garbage' }, auth)).body.error?.code).toBe('contacts.invalid_cursor');
    const tampered = p.next_cursor.slice(0, -2) + (p.next_cursor.endsWith('AA') ? 'BB' : 'AA');
    expect((await invoke('contacts-list', { cursor: tampered }, auth)).body.error?.code).toBe('contacts.invalid_cursor');
    expect((await invoke('contacts-list', { cursor: p.next_cursor, tags: ['vip'] }, auth)).body.error?.code).toBe('contacts.invalid_cursor');
    expect((await invoke('contacts-list', { cursor: p.next_cursor }, newAccount())).body.error?.code).toBe('contacts.invalid_cursor');
    expect((await invoke('companies-list', { cursor: p.next_cursor }, auth)).body.error?.code).toBe('companies.invalid_cursor');
    expect((await invoke('contacts-list', { bogus: 1 }, auth)).body.error?.code).toBe('contacts.invalid_request');
    expect((await invoke('contacts-list', { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, auth)).body.error?.code).toBe('contacts.invalid_request');
    expect((await invoke('contacts-list', { company_id: 'x' }, auth)).body.error?.code).toBe('contacts.invalid_request');
    expect((await invoke('contacts-list', { search: 'x'.repeat(201) }, auth)).body.error?.code).toBe('contacts.invalid_request');
  });

  it('stays stable when records are created between pages', async () => {
    const other = newAccount();
    const mine: Rec[] = [];
    for (let i = 0; i < 7; i++) mine.push(await ok<Rec>('contacts-create', { first_name: `P${i}` }, other));
    const first = await ok<Page>('contacts-list', { limit: 3 }, other);
    await ok('contacts-create', { first_name: 'Newcomer' }, other);
    const seen = [...first.items];
    let cursor = first.next_cursor;
    while (cursor) {
      const p = await ok<Page>('contacts-list', { limit: 3, cursor }, other);
      seen.push(...p.items);
      cursor = p.next_cursor;
    }
    expect(seen.map((r) => r.id)).toEqual(mine.sort(order).map((r) => r.id));
  });

  it('property: every filter combination returns exactly the matching records, in order, across pages', async () => {
    const companyIds = companies.map((c) => c.id);
    const sourceIds = sources.map((s) => s.id);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          tags: fc.subarray(['vip', 'lead', 'churn', 'eu'], { maxLength: 2 }),
          company_ids: fc.subarray(companyIds, { maxLength: 2 }),
          source_ids: fc.subarray(sourceIds, { maxLength: 1 }),
          search: fc.constantFrom('', 'ana', 'tester1', 'émile', 'EMILE', 'acme', 'glob', 'user3', '555', '(555) 11', 'ch', 'zzz'),
        }, { requiredKeys: [] }),
        fc.integer({ min: 1, max: 10 }),
        async (filters, limit) => {
          const pages = await walk('contacts-list', filters, auth, limit);
          const got = pages.flat().map((r) => r.id);
          const q = (filters.search ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
          const expected = all.filter((c) => {
            if (!(filters.tags ?? []).every((t) => c.tags.includes(t))) return false;
            if (filters.company_ids?.length && !filters.company_ids.includes(c.company_id as string)) return false;
            if (filters.source_ids?.length && !filters.source_ids.includes(c.source_id as string)) return false;
            if (!q) return true;
            const ws = [c.first_name, c.last_name, c.email, c.phone, c.company_name].join(' ').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u);
            const digits = String(c.phone).match(/\d+/g) ?? [];
            const suffixes = digits.map((_, i) => digits.slice(i).join(''));
            const qDigits = q.replace(/\D/g, '');
            if (/^[\d+().\-\s]+$/.test(q) && qDigits.length >= 3 && suffixes.some((s) => s.startsWith(qDigits))) return true;
            return q.split(/[^\p{L}\p{N}]+/u).filter(Boolean).every((w) => ws.some((x) => x.startsWith(w)) || String(c.email).toLowerCase().startsWith(w));
          });
          expect(got).toEqual(expected.map((r) => r.id));
          pages.slice(0, -1).forEach((p) => expect(p).toHaveLength(limit));
        },
      ),
      { numRuns: 15 },
    );
  });

  it('filters companies by tags and search on name and domain', async () => {
    expect((await ok<Page>('companies-list', { tags: ['partner'] }, auth)).items.map((c) => c.name)).toEqual(['Acme Corp']);
    expect((await ok<Page>('companies-list', { search: 'globex.com' }, auth)).items.map((c) => c.name)).toEqual(['Globex Corp']);
    expect((await ok<Page>('companies-list', { search: 'ini' }, auth)).items.map((c) => c.name)).toEqual(['Initech Corp']);
    expect((await ok<Page>('companies-list', { search: 'corp' }, auth)).items.map((c) => c.name)).toEqual(['Initech Corp', 'Globex Corp', 'Acme Corp']);
    expect((await ok<Page>('companies-list', { search: '   ' }, auth)).items).toHaveLength(3);
  });

  it('pages through lead sources', async () => {
    const pages = await walk('sources-list', {}, auth, 1);
    expect(pages.flat().map((s) => s.name)).toEqual(['Referral', 'Web']);
  });

  it('reads capacity in proportion to the page, not to the account', async () => {
    const measure = async (body: Record<string, unknown>) => (await measureCapacity(() => ok<Page>('contacts-list', { limit: 5, ...body }, auth))).usage;
    for (const body of [{}, { tags: ['vip'] }, { search: 'tester' }, { company_id: companies[0]!.id }, { source_ids: [sources[1]!.id] }]) {
      const u = await measure(body);
      expect(u.itemsRead, JSON.stringify(body)).toBeLessThanOrEqual(2 * 6 + 2);
    }
  });

  it('reads past Query pages that come back empty with a LastEvaluatedKey (as AWS does under the 1 MB limit)', async () => {
    // Limit 1 with a filter that drops most items produces empty pages that still carry a
    // LastEvaluatedKey, the same shape AWS returns when 1 MB is read before any item matches.
    const { readPartition } = await import('../../shared/db/lists.js');
    const target = all.find((r) => r.first_name === 'Hana')!;
    const got: unknown[] = [];
    let emptyPages = 0;
    const orig = db().send.bind(db());
    const spy = async (cmd: unknown) => {
      const out = (await orig(cmd as never)) as { Items?: unknown[]; LastEvaluatedKey?: unknown };
      if (cmd instanceof QueryCommand && out.Items?.length === 0 && out.LastEvaluatedKey) emptyPages++;
      return out;
    };
    (db() as unknown as { send: typeof spy }).send = spy;
    try {
      for await (const item of readPartition(
        { IndexName: 'gsi1', KeyConditionExpression: '#p = :p', FilterExpression: 'first_name = :n', ExpressionAttributeNames: { '#p': 'gsi1pk' }, ExpressionAttributeValues: { ':p': `A#${auth.accountId}#contact`, ':n': 'Hana' } },
        'gsi1sk',
        undefined,
        1,
      )) got.push((item as Rec).id);
    } finally {
      (db() as unknown as { send: typeof orig }).send = orig;
    }
    expect(emptyPages).toBeGreaterThan(0);
    expect(got).toContain(target.id);
    expect(got).toHaveLength(all.filter((r) => r.first_name === 'Hana').length);
  });
});

describe('search by a complete email address', () => {
  it('is an exact, case-insensitive email lookup read from one index entry', async () => {
    const auth = newAccount();
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada', email: 'Ada.Lovelace@Example.com' }, auth);
    await ok('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'other@example.com' }, auth);
    await ok('contacts-create', { first_name: 'Bob', email: 'ada.lovelace@example.com.au' }, auth);
    await worker.drain();
    const { result, usage } = await measureCapacity(() => ok<Page>('contacts-list', { search: '  ada.lovelace@EXAMPLE.com ' }, auth));
    expect(result.items.map((r) => r.id)).toEqual([ada.id]);
    expect(usage.itemsRead).toBeLessThanOrEqual(3);
    // a partial address is still a word search
    expect((await ok<Page>('contacts-list', { search: 'ada.lovelace@example' }, auth)).items).toHaveLength(3);
    await ok('contacts-update', { id: ada.id, email: 'ada@newmail.org' }, auth);
    expect((await ok<Page>('contacts-list', { search: 'ada.lovelace@example.com' }, auth)).items).toEqual([]);
    expect((await ok<Page>('contacts-list', { search: 'ADA@newmail.org' }, auth)).items.map((r) => r.id)).toEqual([ada.id]);
  });
});
