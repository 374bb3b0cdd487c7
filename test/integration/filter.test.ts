/**
 * Filtering and sorting on any field (contract §17), against DynamoDB Local through the handlers:
 * a differential property test (generated filters and sorts over every type and operator, each
 * full page walk compared with an in-memory oracle written from the contract's text, not from the
 * product's evaluator), validation with paths, cursor binding, read-your-writes, the read budget.
 */
import fc from 'fast-check';
import { measureCapacity } from '../../shared/db/capacity.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoke, newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string; created_at: string; custom_fields: Record<string, unknown> };
type Page = { items: Rec[]; next_cursor: string };

async function walk(op: string, body: Record<string, unknown>, auth: ReturnType<typeof newAccount>, limit: number): Promise<Rec[][]> {
  const pages: Rec[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 2000; i++) {
    const p = await ok<Page>(op, { ...body, limit, ...(cursor ? { cursor } : {}) }, auth);
    pages.push(p.items);
    if (!p.next_cursor) return pages;
    cursor = p.next_cursor;
  }
  throw new Error('too many pages');
}

// --- the oracle: contract §17 read literally ----------------------------------------------------

type T = 'text' | 'number' | 'datetime' | 'date' | 'boolean' | 'enum' | 'set' | 'id';
const fold = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
const empty = (v: unknown) => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
function key(t: T, v: unknown): string | number {
  if (t === 'text') return fold(v as string);
  if (t === 'datetime') return Date.parse(v as string);
  if (t === 'boolean') return v ? 1 : 0;
  return v as string | number;
}
type F = { field: string; op: string; value?: unknown } | { and: F[] } | { or: F[] } | { not: F };
function oracle(f: F, r: Rec, types: Record<string, T>): boolean {
  if ('and' in f) return f.and.every((x) => oracle(x, r, types));
  if ('or' in f) return f.or.some((x) => oracle(x, r, types));
  if ('not' in f) return !oracle(f.not, r, types);
  const t = types[f.field]!;
  const v = f.field.startsWith('custom_fields.') ? r.custom_fields[f.field.slice(14)] : r[f.field];
  switch (f.op) {
    case 'exists':
      return !empty(v);
    case 'not_exists':
      return empty(v);
    case 'neq':
      return !oracle({ ...f, op: 'eq' }, r, types);
    case 'nin':
      return !oracle({ ...f, op: 'in' }, r, types);
    case 'contains':
      return Array.isArray(v) && v.includes(f.value);
    case 'contains_any':
      return Array.isArray(v) && (f.value as unknown[]).some((x) => v.includes(x));
    case 'contains_all':
      return Array.isArray(v) && (f.value as unknown[]).every((x) => v.includes(x));
  }
  if (empty(v)) return false;
  const a = key(t, v);
  const b = (x: unknown) => key(t, x);
  switch (f.op) {
    case 'eq':
      return a === b(f.value);
    case 'in':
      return (f.value as unknown[]).some((x) => a === b(x));
    case 'prefix':
      return String(a).startsWith(String(b(f.value)));
    case 'lt':
      return a < b(f.value);
    case 'lte':
      return a <= b(f.value);
    case 'gt':
      return a > b(f.value);
    case 'gte':
      return a >= b(f.value);
    case 'between': {
      const [lo, hi] = f.value as unknown[];
      return a >= b(lo) && (t === 'datetime' ? a < b(hi) : a <= b(hi));
    }
  }
  throw new Error(`oracle: ${f.op}`);
}
function oracleSort(records: Rec[], field: string, direction: 'asc' | 'desc', t: T): Rec[] {
  const val = (r: Rec) => (field.startsWith('custom_fields.') ? r.custom_fields[field.slice(14)] : r[field]);
  const s = direction === 'asc' ? 1 : -1;
  return [...records].sort((x, y) => {
    const [a, b] = [val(x), val(y)];
    if (empty(a) !== empty(b)) return empty(a) ? 1 : -1;
    if (!empty(a)) {
      const [ka, kb] = [key(t, a), key(t, b)];
      if (ka !== kb) return ka < kb ? -s : s;
    }
    // Ties by list position: created_at, then id, in the sort's direction.
    const [px, py] = [`${String(x.created_at)}#${x.id}`, `${String(y.created_at)}#${y.id}`];
    return px < py ? -s : s;
  });
}

// --- the data --------------------------------------------------------------------------------

const FIRST = ['Élodie', 'elodie', 'Ana', 'ANAÏS', 'Bob', 'Zoë', 'zoe'];
const LAST = ['', 'Martin', 'martín', 'Okafor', 'Ng'];
const TAGS = ['vip', 'lead', 'eu', 'VIP'];
const OPTIONS = ['free', 'pro', 'enterprise'];
const NUMS = [-5, 0, 2.5, 10, 50, 1000];
const DATES = ['2026-01-01', '2026-05-31', '2026-06-01', '2026-12-31'];
// The same instants written with offsets: compared as instants.
const TIMES = ['2026-03-01T10:00:00.000Z', '2026-03-01T12:00:00+02:00', '2026-03-01T09:00:00-05:00', '2026-07-01T00:00:00Z', '2026-03-01T10:00:00.001Z'];

describe('filter and sort (contract §17)', () => {
  const auth = newAccount();
  const cf: Record<string, string> = {};
  const types: Record<string, T> = {
    id: 'id',
    first_name: 'text',
    last_name: 'text',
    email: 'text',
    company_name: 'text',
    company_id: 'id',
    tags: 'set',
    created_at: 'datetime',
    updated_at: 'datetime',
  };
  let records: Rec[] = [];
  let companies: Rec[] = [];

  beforeAll(async () => {
    companies = [await ok<Rec>('companies-create', { name: 'Äcme' }, auth), await ok<Rec>('companies-create', { name: 'Globex' }, auth)];
    for (const [name, field_type, t] of [
      ['num', 'number', 'number'],
      ['day', 'date', 'date'],
      ['at', 'datetime', 'datetime'],
      ['flag', 'boolean', 'boolean'],
      ['plan', 'select', 'enum'],
      ['multi', 'multi_select', 'set'],
      ['note', 'text', 'text'],
    ] as const) {
      const d = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name, field_type, ...(field_type.includes('select') ? { options: OPTIONS } : {}) }, auth);
      cf[name] = d.id;
      types[`custom_fields.${d.id}`] = t;
    }
    const rnd = fc.sample(fc.integer({ min: 0, max: 1_000_000 }), { numRuns: 60, seed: 17 });
    const pick = <X,>(xs: readonly X[], i: number, n: number) => xs[(rnd[i]! >> n) % xs.length]!;
    for (let i = 0; i < 45; i++) {
      const custom: Record<string, unknown> = {};
      if (i % 7 !== 0) custom[cf.num!] = pick(NUMS, i, 1);
      if (i % 5 !== 1) custom[cf.day!] = pick(DATES, i, 2);
      if (i % 4 !== 2) custom[cf.at!] = pick(TIMES, i, 3);
      if (i % 3 !== 0) custom[cf.flag!] = (rnd[i]! >> 4) % 2 === 0;
      if (i % 6 !== 3) custom[cf.plan!] = pick(OPTIONS, i, 5);
      if (i % 5 !== 4) custom[cf.multi!] = OPTIONS.filter((_, k) => ((rnd[i]! >> (6 + k)) & 1) === 1);
      if (i % 3 !== 1) custom[cf.note!] = pick(FIRST, i, 9);
      records.push(
        await ok<Rec>('contacts-create', {
          first_name: pick(FIRST, i, 10),
          last_name: pick(LAST, i, 11),
          email: i % 4 === 0 ? '' : `p${i}@x${i % 3}.example`,
          company_id: i % 3 === 2 ? null : companies[i % 2]!.id,
          tags: TAGS.filter((_, k) => ((rnd[i]! >> (12 + k)) & 1) === 1),
          custom_fields: custom,
        }, auth),
      );
    }
    // A third of them written again (their updated_at moves: its sort-ordered entry moves beside the write).
    for (const r of records.filter((_, i) => i % 3 === 1)) await ok('contacts-update', { id: r.id, notes: 'again' }, auth);
    records = (await walk('contacts-list', {}, auth, 100)).flat();
    expect(records).toHaveLength(45);
  });

  const valueOf = (t: T, field: string): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'text':
        return fc.constantFrom(...FIRST, ...LAST.filter(Boolean), 'el', 'ÉL', 'a', 'Ä', 'p1', 'globex');
      case 'number':
        return fc.constantFrom(...NUMS, 1, -10, 3);
      case 'date':
        return fc.constantFrom(...DATES, '2026-03-15');
      case 'datetime':
        if (field === 'created_at' || field === 'updated_at') return fc.constantFrom(...records.map((r) => String(r[field])), String(records[5]![field]).replace('Z', '+00:00'));
        return fc.constantFrom(...TIMES, '2026-03-01T11:00:00+01:00', '2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z');
      case 'boolean':
        return fc.boolean();
      case 'enum':
        return fc.constantFrom(...OPTIONS);
      case 'set':
        return field === 'tags' ? fc.constantFrom(...TAGS) : fc.constantFrom(...OPTIONS);
      case 'id':
        return fc.constantFrom(...companies.map((c) => c.id), records[3]!.id, records[10]!.id);
    }
  };
  const OPS: Record<T, string[]> = {
    text: ['eq', 'neq', 'in', 'nin', 'prefix', 'exists', 'not_exists'],
    number: ['eq', 'neq', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
    datetime: ['eq', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
    date: ['eq', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
    boolean: ['eq', 'exists', 'not_exists'],
    enum: ['eq', 'neq', 'in', 'nin', 'exists', 'not_exists'],
    set: ['contains', 'contains_any', 'contains_all', 'exists', 'not_exists'],
    id: ['eq', 'neq', 'in', 'nin', 'exists', 'not_exists'],
  };
  const condition = (): fc.Arbitrary<F> =>
    fc.constantFrom(...Object.keys(types)).chain((field) => {
      const t = types[field]!;
      return fc.constantFrom(...OPS[t]).chain((op): fc.Arbitrary<F> => {
        if (op === 'exists' || op === 'not_exists') return fc.constant({ field, op });
        if (['in', 'nin', 'contains_any', 'contains_all'].includes(op)) return fc.uniqueArray(valueOf(t, field), { minLength: 1, maxLength: 3 }).map((value) => ({ field, op, value }));
        if (op === 'between') return fc.tuple(valueOf(t, field), valueOf(t, field)).map((value) => ({ field, op, value }));
        return valueOf(t, field).map((value) => ({ field, op, value }));
      });
    });
  const filterArb: fc.Arbitrary<F> = fc.letrec<{ node: F }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      condition(),
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((and) => ({ and })),
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((or) => ({ or })),
      tie('node').map((not) => ({ not })),
    ),
  })).node;
  const depth = (f: F): number => ('and' in f ? 1 + Math.max(...f.and.map(depth)) : 'or' in f ? 1 + Math.max(...f.or.map(depth)) : 'not' in f ? 1 + depth(f.not) : 1);
  const count = (f: F): number => ('and' in f ? f.and.reduce((n, x) => n + count(x), 0) : 'or' in f ? f.or.reduce((n, x) => n + count(x), 0) : 'not' in f ? count(f.not) : 1);
  const sortable = () => Object.keys(types).filter((k) => !['set', 'id'].includes(types[k]!));

  it('every page walk equals the oracle, for generated filters and sorts over every type and operator', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArb.filter((f) => depth(f) <= 4 && count(f) <= 20),
        fc.option(fc.record({ field: fc.constantFrom(...sortable()), direction: fc.constantFrom('asc' as const, 'desc' as const) }), { nil: undefined }),
        fc.integer({ min: 1, max: 20 }),
        async (filter, sort, limit) => {
          const pages = await walk('contacts-list', { filter, ...(sort ? { sort } : {}) }, auth, limit);
          const matching = records.filter((r) => oracle(filter, r, types));
          const expected = sort ? oracleSort(matching, sort.field, sort.direction, types[sort.field]!) : matching;
          expect(pages.flat().map((r) => r.id)).toEqual(expected.map((r) => r.id));
          pages.slice(0, -1).forEach((p) => expect(p).toHaveLength(limit));
        },
      ),
      { numRuns: 60, seed: 29 },
    );
  }, 120_000);

  it('compares text without case or accents, datetimes as instants, and keeps empty values out of ranges', async () => {
    const ids = async (filter: unknown, sort?: unknown) => (await walk('contacts-list', { filter, ...(sort ? { sort } : {}) }, auth, 100)).flat().map((r) => r.id);
    const elodies = records.filter((r) => fold(String(r.first_name)) === 'elodie').map((r) => r.id);
    expect(elodies.length).toBeGreaterThan(1);
    expect(await ids({ field: 'first_name', op: 'eq', value: 'ELODIE' })).toEqual(elodies);
    const at = `custom_fields.${cf.at}`;
    const tenZ = records.filter((r) => Date.parse(String(r.custom_fields[cf.at!] ?? 'x')) === Date.parse('2026-03-01T10:00:00Z')).map((r) => r.id);
    expect(tenZ.length).toBeGreaterThan(1);
    expect(await ids({ field: at, op: 'eq', value: '2026-03-01T11:00:00+01:00' })).toEqual(tenZ);
    const noNum = records.filter((r) => r.custom_fields[cf.num!] === undefined).map((r) => r.id);
    const ranged = await ids({ or: [{ field: `custom_fields.${cf.num}`, op: 'lt', value: 1e9 }, { field: `custom_fields.${cf.num}`, op: 'gte', value: 1e9 }] });
    expect(ranged.filter((id) => noNum.includes(id))).toEqual([]);
    expect(await ids({ not: { field: `custom_fields.${cf.num}`, op: 'exists' } })).toEqual(noNum);
    // Empty values last in both directions.
    for (const direction of ['asc', 'desc']) {
      const sorted = await ids(undefined as never, { field: 'last_name', direction });
      const emptyAt = sorted.map((id) => records.find((r) => r.id === id)!.last_name === '');
      expect(emptyAt.indexOf(true)).toBeGreaterThan(0);
      expect(emptyAt.slice(emptyAt.indexOf(true)).every(Boolean)).toBe(true);
    }
  });

  it('refuses bad filters with the path and why, and bad sorts', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const r = await invoke<unknown>('contacts-list', body, auth);
      expect(r.status).toBe(400);
      return r.body as unknown as { error: { code: string; message: string; details?: { path: string; message: string }[] } };
    };
    const cond = { field: 'first_name', op: 'eq', value: 'x' };
    const cases: [unknown, string, RegExp][] = [
      [{ and: [cond, { field: 'first_name', op: 'eq', value: 3 }] }, 'filter.and[1].value', /string/],
      [{ and: [cond, { field: 'nope', op: 'eq', value: 'x' }] }, 'filter.and[1].field', /unknown field/],
      [{ field: 'account_id', op: 'eq', value: 'x' }, 'filter.field', /unknown field/],
      [{ field: 'first_name', op: 'lt', value: 'x' }, 'filter.op', /does not apply/],
      [{ field: 'first_name', op: 'like', value: 'x' }, 'filter.op', /unknown operator/],
      [{ field: 'tags', op: 'exists', value: 'x' }, 'filter.value', /no value/],
      [{ or: [cond, { not: { field: `custom_fields.${cf.num}`, op: 'between', value: [1] } }] }, 'filter.or[1].not.value', /two values/],
      [{ field: 'created_at', op: 'gt', value: '2026-13-01T00:00:00Z' }, 'filter.value', /datetime/],
      [{ field: 'company_id', op: 'in', value: ['not-a-uuid'] }, 'filter.value[0]', /UUID/],
      [{ field: 'tags', op: 'contains_any', value: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'filter.value', /1 to 100/],
      [{ and: [] }, 'filter.and', /1 to 20/],
      [{ not: { not: { not: { not: cond } } } }, 'filter.not.not.not.not', /4 levels/],
      [{ or: Array.from({ length: 3 }, () => ({ and: Array.from({ length: 8 }, () => cond) })) }, 'filter', /too many conditions: at most 20/],
      [{ field: `custom_fields.00000000-0000-4000-8000-000000000000`, op: 'exists' }, 'filter.field', /unknown field/],
      [{ and: [cond], or: [cond] }, 'filter', /exactly one/],
      ['first_name', 'filter', /condition/],
    ];
    for (const [filter, path, why] of cases) {
      const e = (await bad({ filter })).error;
      expect(e.code).toBe('contacts.invalid_filter');
      expect(e.details?.map((d) => d.path)).toContain(path);
      expect(e.details?.find((d) => d.path === path)?.message).toMatch(why);
    }
    for (const sort of [{ field: 'tags' }, { field: 'nope' }, { field: 'first_name', direction: 'up' }, 'first_name', { field: 'id', direction: 'asc' }]) {
      expect((await bad({ sort })).error.code).toBe('contacts.invalid_sort');
    }
    // The other families take the same filter, by their own fields.
    const p = await invoke('projects-list', { filter: { field: 'status', op: 'eq', value: 'done' } }, auth);
    expect((p.body as unknown as { error: { code: string; details: { path: string }[] } }).error).toMatchObject({ code: 'projects.invalid_filter', details: [{ path: 'filter.value' }] });
    const a = await invoke('activities-list', { sort: { field: 'contact_ids' } }, auth);
    expect((a.body as unknown as { error: { code: string } }).error.code).toBe('activities.invalid_sort');
  });

  it('binds the cursor to filter and sort', async () => {
    const filter = { field: 'first_name', op: 'prefix', value: 'e' };
    const first = await ok<Page>('contacts-list', { filter, limit: 1 }, auth);
    expect(first.next_cursor).not.toBe('');
    for (const body of [{ filter: { ...filter, value: 'a' } }, {}, { filter, sort: { field: 'first_name', direction: 'asc' } }]) {
      const r = await invoke('contacts-list', { ...body, limit: 1, cursor: first.next_cursor }, auth);
      expect(r.status).toBe(400);
      expect((r.body as unknown as { error: { code: string } }).error.code).toBe('contacts.invalid_cursor');
    }
    const sorted = await ok<Page>('contacts-list', { sort: { field: 'first_name', direction: 'asc' }, limit: 1 }, auth);
    const r = await invoke('contacts-list', { sort: { field: 'first_name', direction: 'desc' }, limit: 1, cursor: sorted.next_cursor }, auth);
    expect((r.body as unknown as { error: { code: string } }).error.code).toBe('contacts.invalid_cursor');
    expect((await ok<Page>('contacts-list', { filter, limit: 1, cursor: first.next_cursor }, auth)).items).toHaveLength(1);
  });

  it('reflects a write in the next list call (read-your-writes)', async () => {
    const own = newAccount();
    const c = await ok<Rec>('contacts-create', { first_name: 'Quentin', last_name: 'Zed' }, own);
    const byName = { filter: { field: 'last_name', op: 'eq', value: 'zed' }, sort: { field: 'first_name', direction: 'asc' } };
    expect((await ok<Page>('contacts-list', byName, own)).items.map((r) => r.id)).toEqual([c.id]);
    await ok('contacts-update', { id: c.id, last_name: 'Other' }, own);
    expect((await ok<Page>('contacts-list', byName, own)).items).toEqual([]);
    expect((await ok<Page>('contacts-list', { filter: { field: 'last_name', op: 'eq', value: 'OTHER' } }, own)).items.map((r) => r.id)).toEqual([c.id]);
  });

  it('answers the issue examples on projects, companies and activities', async () => {
    const own = newAccount();
    const big = await ok<Rec>('companies-create', { name: 'Big', employee_count: 120 }, own);
    await ok('companies-create', { name: 'Small', employee_count: 10 }, own);
    const since = new Date(Date.now() - 86_400_000).toISOString();
    expect((await ok<Page>('companies-list', { filter: { and: [{ field: 'employee_count', op: 'gt', value: 50 }, { field: 'created_at', op: 'gte', value: since }] } }, own)).items.map((r) => r.id)).toEqual([big.id]);
    const p1 = await ok<Rec>('projects-create', { name: 'A', amount: 2_000_000, due_date: '2026-05-01' }, own);
    const p2 = await ok<Rec>('projects-create', { name: 'B', amount: 1_500_000, due_date: '2026-04-01' }, own);
    await ok('projects-create', { name: 'C', amount: 500_000, due_date: '2026-03-01' }, own);
    await ok('projects-create', { name: 'D', amount: 3_000_000, due_date: '2026-03-01', status: 'completed' }, own);
    const open = await ok<Page>(
      'projects-list',
      { filter: { and: [{ field: 'status', op: 'eq', value: 'open' }, { field: 'amount', op: 'gt', value: 1_000_000 }, { field: 'due_date', op: 'lt', value: '2026-06-01' }] }, sort: { field: 'due_date', direction: 'asc' } },
      own,
    );
    expect(open.items.map((r) => r.id)).toEqual([p2.id, p1.id]);
    const overdue = await ok<Rec>('activities-create', { type: 'task', subject: 'late', due_at: '2026-01-01T00:00:00Z' }, own);
    await ok('activities-create', { type: 'task', subject: 'done', due_at: '2026-01-01T00:00:00Z', completed: true }, own);
    await ok('activities-create', { type: 'task', subject: 'later', due_at: '2099-01-01T00:00:00Z' }, own);
    const now = new Date().toISOString();
    const tasks = await ok<Page>('activities-list', { filter: { and: [{ field: 'type', op: 'eq', value: 'task' }, { field: 'completed', op: 'eq', value: false }, { field: 'due_at', op: 'lt', value: now }] } }, own);
    expect(tasks.items.map((r) => r.id)).toEqual([overdue.id]);
  });

  it('exports take the same filter and sort', async () => {
    const r = await invoke('exports-create', { object_type: 'contacts', filters: { filter: { field: 'first_name', op: 'lt', value: 'x' } } }, auth);
    expect(r.status).toBe(400);
    expect((r.body as unknown as { error: { code: string; details: { path: string }[] } }).error).toMatchObject({ code: 'exports.invalid_filter', details: [{ path: 'filters.filter.op' }] });
  });
});

describe('the read budget of conditions no index serves (contract §17)', () => {
  it('reads at most 1,000 items per page, returns short pages with a continuing cursor, and finds every match', async () => {
    const auth = newAccount();
    const rare: string[] = [];
    for (let b = 0; b < 12; b++) {
      const items = Array.from({ length: 100 }, (_, i) => ({ first_name: `n${b * 100 + i}`, job_title: (b * 100 + i) % 397 === 5 ? 'Rare' : 'Common' }));
      const res = await ok<{ results: { ok: boolean; record: Rec }[] }>('contacts-batch-create', { items }, auth);
      rare.push(...res.results.filter((x) => x.record.job_title === 'Rare').map((x) => x.record.id));
    }
    expect(rare).toHaveLength(4);
    // job_title keeps no sort-ordered entries: the list's own order, re-checked within the budget.
    const pages = await walk('contacts-list', { filter: { field: 'job_title', op: 'eq', value: 'rare' } }, auth, 25);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flat().map((r) => r.id).sort()).toEqual([...rare].sort());
    expect(pages.some((p) => p.length < 25 && p !== pages.at(-1))).toBe(true);
    // With a condition on an indexed field too broad to drive the page (every first_name starts with
    // n: 1,200 entries), the entries read to find that out count against the same budget.
    const both = { filter: { and: [{ field: 'first_name', op: 'prefix', value: 'n' }, { field: 'job_title', op: 'eq', value: 'rare' }] } };
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const { result, usage } = await measureCapacity(() => ok<{ items: Rec[]; next_cursor: string }>('contacts-list', { ...both, limit: 25, ...(cursor ? { cursor } : {}) }, auth));
      // The page's entries and records, and the account's META item (read beside them).
      expect(usage.itemsRead).toBeLessThanOrEqual(1_000 + 1);
      found.push(...result.items.map((r) => r.id));
      cursor = result.next_cursor || undefined;
    } while (cursor);
    expect(found.sort()).toEqual([...rare].sort());
    // A sort on first_name reads its sort-ordered entries in order (full pages at any size).
    const sorted = (await walk('contacts-list', { sort: { field: 'first_name', direction: 'desc' } }, auth, 100)).flat();
    expect(sorted).toHaveLength(1200);
    expect(sorted[0]!.first_name).toBe('n999');
  }, 120_000);
});
