/**
 * Members of an account (contract §20, first bullet): create, get, list by name, update,
 * deactivate, reactivate; one member per address (case-insensitively) and at most the account's
 * limit (the contract's 1,000; 20 here, CRM_MEMBER_LIMIT), under concurrent creates too; hostile
 * bodies; tenancy and scopes; a contact's erasure leaves members.
 */
import { randomUUID } from 'node:crypto';
import { type FauxqsServer, startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runErasure } from '../../shared/erasures/worker.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { invoke, newAccount, ok } from '../helpers/api.js';

interface Member { id: string; email: string; name: string; status: 'active' | 'deactivated'; created_at: string; updated_at: string; deactivated_at: string | null }
interface Page { items: Member[]; next_cursor: string }
type Auth = ReturnType<typeof newAccount>;

const create = (auth: Auth, body: Record<string, unknown> = {}) => ok<Member>('members-create', { email: `m-${randomUUID()}@example.com`, name: 'Ada', ...body }, auth);
const error = async (op: string, body: unknown, auth: Auth) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: r.body.error?.details ?? [], message: r.body.error?.message ?? '' };
};
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Every page of members-list with `body`, in order. */
async function walk(auth: Auth, body: Record<string, unknown>): Promise<{ pages: Page[]; items: Member[] }> {
  const pages: Page[] = [];
  let cursor = '';
  do {
    const page = await ok<Page>('members-list', { ...body, ...(cursor ? { cursor } : {}) }, auth);
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor);
  return { pages, items: pages.flatMap((p) => p.items) };
}

/** The list's order: the folded name (case- and accent-insensitive), then the id. */
const fold = (s: string) => s.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
const byName = (a: Member, b: Member) => Buffer.compare(Buffer.from(`${fold(a.name)}\u0001${a.id}`), Buffer.from(`${fold(b.name)}\u0001${b.id}`));

describe('members', () => {
  it('creates an active member, email and name trimmed, and gets it', async () => {
    const auth = newAccount();
    const m = await ok<Member>('members-create', { email: '  Ada.Lovelace@Example.COM ', name: '  Ada Lovelace ' }, auth);
    expect(Object.keys(m).sort()).toEqual(['created_at', 'deactivated_at', 'email', 'id', 'name', 'status', 'updated_at']);
    expect(m).toMatchObject({ email: 'Ada.Lovelace@Example.COM', name: 'Ada Lovelace', status: 'active', deactivated_at: null });
    expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(m.created_at).toMatch(TIME);
    expect(m.updated_at).toBe(m.created_at);
    expect(await ok<Member>('members-get', { id: m.id }, auth)).toEqual(m);
    expect(await ok<Member>('members-get', { id: m.id.toUpperCase() }, auth)).toEqual(m);
    expect(await error('members-get', { id: randomUUID() }, auth)).toMatchObject({ status: 404, code: 'members.not_found' });
    expect(await error('members-get', { id: 'nope' }, auth)).toMatchObject({ status: 400, code: 'members.invalid_id', details: [{ path: 'id' }] });
    expect(await error('members-get', {}, auth)).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'id' }] });
  });

  it('keeps an address one member\'s, case-insensitively: 409 members.conflict naming the holder', async () => {
    const auth = newAccount();
    const a = await create(auth, { email: 'grace@example.com', name: 'Grace' });
    const dup = await error('members-create', { email: ' GRACE@Example.com', name: 'Other' }, auth);
    expect(dup).toMatchObject({ status: 409, code: 'members.conflict', details: [{ path: 'email', message: `is the email of member ${a.id}` }] });
    // a deactivated member keeps its address
    await ok('members-deactivate', { id: a.id }, auth);
    expect((await error('members-create', { email: 'grace@EXAMPLE.com', name: 'Other' }, auth)).code).toBe('members.conflict');
    // another account may have it
    expect((await create(newAccount(), { email: 'grace@example.com' })).email).toBe('grace@example.com');
    expect((await walk(auth, {})).items.map((m) => m.id)).toEqual([a.id]);
  });

  it('of concurrent creates of one address in different cases, exactly one wins', async () => {
    const auth = newAccount();
    const cases = ['lin@example.com', 'LIN@example.com', 'Lin@Example.com', 'lIn@example.COM', 'LIN@EXAMPLE.COM', 'lin@EXAMPLE.com', 'Lin@example.com', 'liN@example.com'];
    const answers = await Promise.all(cases.map((email, i) => invoke<Member>('members-create', { email, name: `Lin ${i}` }, auth)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const winner = answers.find((a) => a.status === 200)!.body.result!;
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect([a.status, a.body.error?.code]).toEqual([409, 'members.conflict']);
      expect(a.body.error?.details).toEqual([{ path: 'email', message: `is the email of member ${winner.id}` }]);
    }
    expect((await walk(auth, {})).items).toEqual([winner]);
  });

  it('updates name and email: the claim moves, a taken address is refused, no change leaves updated_at', async () => {
    const auth = newAccount();
    const a = await create(auth, { email: 'a@example.com', name: 'Alan' });
    const b = await create(auth, { email: 'b@example.com', name: 'Barbara' });
    await new Promise((r) => setTimeout(r, 5));
    const a2 = await ok<Member>('members-update', { id: a.id, name: ' Alan Turing ', email: 'alan@example.com' }, auth);
    expect(a2).toMatchObject({ id: a.id, name: 'Alan Turing', email: 'alan@example.com', status: 'active', created_at: a.created_at });
    expect(a2.updated_at > a.updated_at).toBe(true);
    expect(await ok<Member>('members-get', { id: a.id }, auth)).toEqual(a2);
    // the old address is free again, the new one is taken
    const c = await create(auth, { email: 'A@example.com', name: 'Claude' });
    expect((await error('members-create', { email: 'ALAN@example.com', name: 'x' }, auth)).code).toBe('members.conflict');
    expect(await error('members-update', { id: b.id, email: 'Alan@Example.com' }, auth)).toMatchObject({ status: 409, code: 'members.conflict', details: [{ path: 'email', message: `is the email of member ${a.id}` }] });
    expect(await ok<Member>('members-get', { id: b.id }, auth)).toEqual(b);
    // the same address in another case: the member's own, stored as given
    const a3 = await ok<Member>('members-update', { id: a.id, email: 'Alan@Example.com' }, auth);
    expect(a3.email).toBe('Alan@Example.com');
    // nothing changes: nothing written
    expect(await ok<Member>('members-update', { id: a.id, name: 'Alan Turing', email: 'Alan@Example.com' }, auth)).toEqual(a3);
    expect(await ok<Member>('members-update', { id: a.id }, auth)).toEqual(a3);
    expect((await walk(auth, {})).items.map((m) => [m.name, m.email])).toEqual([['Alan Turing', 'Alan@Example.com'], ['Barbara', 'b@example.com'], ['Claude', c.email]]);
    expect(await error('members-update', { id: randomUUID(), name: 'x' }, auth)).toMatchObject({ status: 404, code: 'members.not_found' });
    expect(await error('members-update', { id: 'x', name: 'x' }, auth)).toMatchObject({ status: 400, code: 'members.invalid_id' });
  });

  it('concurrent updates to one address: exactly one member gets it', async () => {
    const auth = newAccount();
    const members = await Promise.all(Array.from({ length: 6 }, (_, i) => create(auth, { name: `M${i}` })));
    const answers = await Promise.all(members.map((m, i) => invoke<Member>('members-update', { id: m.id, email: i % 2 ? 'Shared@example.com' : 'shared@EXAMPLE.com' }, auth)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 409 && a.body.error?.code === 'members.conflict')).toBe(true);
    const all = (await walk(auth, {})).items;
    expect(all.filter((m) => m.email.toLowerCase() === 'shared@example.com')).toHaveLength(1);
    // every other member's own address is still claimed by it
    for (const m of all.filter((x) => x.email.toLowerCase() !== 'shared@example.com')) expect((await error('members-create', { email: m.email.toUpperCase(), name: 'x' }, auth)).code).toBe('members.conflict');
  });

  it('deactivates (idempotently) and reactivates; a reassign_to that is not an active member other than this one is refused, nothing written', async () => {
    const auth = newAccount();
    const a = await create(auth, { name: 'Ada' });
    const b = await create(auth, { name: 'Bob' });
    await new Promise((r) => setTimeout(r, 5));
    const d = await ok<Member>('members-deactivate', { id: a.id }, auth);
    expect(d).toMatchObject({ id: a.id, status: 'deactivated', email: a.email, name: 'Ada' });
    expect(d.deactivated_at).toMatch(TIME);
    expect(d.updated_at).toBe(d.deactivated_at);
    expect(await ok<Member>('members-deactivate', { id: a.id }, auth)).toEqual(d);
    expect(await ok<Member>('members-get', { id: a.id }, auth)).toEqual(d);

    // reassign_to: an active member other than this one, or null (test/integration/reassignments.test.ts hands records on); else 400, nothing written
    for (const [to, message] of [[a.id, 'is a deactivated member'], [b.id, 'is the member being deactivated'], [randomUUID(), 'is not a member of the account'], [(await create(newAccount())).id, 'is not a member of the account']] as const) {
      expect(await error('members-deactivate', { id: b.id, reassign_to: to }, auth), message).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'reassign_to', message }] });
    }
    expect(await error('members-deactivate', { id: b.id, reassign_to: 'someone' }, auth)).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'reassign_to' }] });
    expect(await error('members-deactivate', { id: b.id, reassign_to: 7 }, auth)).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'reassign_to' }] });
    expect(await error('members-deactivate', { id: randomUUID(), reassign_to: null }, auth)).toMatchObject({ status: 404, code: 'members.not_found' });
    expect(await ok<Member>('members-get', { id: b.id }, auth)).toEqual(b);

    const r = await ok<Member>('members-reactivate', { id: a.id }, auth);
    expect(r).toMatchObject({ id: a.id, status: 'active', deactivated_at: null, email: a.email, created_at: a.created_at });
    expect(r.updated_at >= d.updated_at).toBe(true);
    expect(await ok<Member>('members-reactivate', { id: a.id }, auth)).toEqual(r);
    for (const op of ['members-deactivate', 'members-reactivate']) {
      expect(await error(op, { id: randomUUID() }, auth), op).toMatchObject({ status: 404, code: 'members.not_found' });
      expect(await error(op, { id: 'x' }, auth), op).toMatchObject({ status: 400, code: 'members.invalid_id' });
      expect(await error(op, {}, auth), op).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'id' }] });
      expect(await error(op, { id: a.id, status: 'active' }, auth), op).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'status', message: 'field is read-only' }] });
    }
  });

  it('refuses hostile bodies with members.invalid_request and details, writing nothing', async () => {
    const auth = newAccount();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'A' }, 'email'],
      [{ email: 'a@example.com' }, 'name'],
      [{ email: 42, name: 'A' }, 'email'],
      [{ email: '', name: 'A' }, 'email'],
      [{ email: '   ', name: 'A' }, 'email'],
      [{ email: 'not-an-address', name: 'A' }, 'email'],
      [{ email: 'a@b', name: 'A' }, 'email'],
      [{ email: 'a b@example.com', name: 'A' }, 'email'],
      [{ email: `${'x'.repeat(250)}@example.com`, name: 'A' }, 'email'],
      [{ email: 'a@example.com', name: '' }, 'name'],
      [{ email: 'a@example.com', name: '  ' }, 'name'],
      [{ email: 'a@example.com', name: 'x'.repeat(201) }, 'name'],
      [{ email: 'a@example.com', name: ['A'] }, 'name'],
      [{ email: 'a@example.com', name: null }, 'name'],
      [{ email: 'a@example.com', name: 'A', status: 'active' }, 'status'],
      [{ email: 'a@example.com', name: 'A', id: randomUUID() }, 'id'],
      [{ email: 'a@example.com', name: 'A', created_at: '2026-01-01T00:00:00.000Z' }, 'created_at'],
      [{ email: 'a@example.com', name: 'A', role: 'admin' }, 'role'],
    ];
    for (const [body, path] of cases) {
      const e = await error('members-create', body, auth);
      expect(e, JSON.stringify(body).slice(0, 100)).toMatchObject({ status: 400, code: 'members.invalid_request' });
      expect(e.details.map((x) => x.path), JSON.stringify(body).slice(0, 100)).toContain(path);
    }
    expect((await error('members-create', [1, 2], auth)).code).toBe('members.invalid_request');
    expect((await error('members-create', 'x', auth)).code).toBe('members.invalid_request');
    // exactly 200 characters after trimming is fine
    expect((await create(auth, { name: ` ${'n'.repeat(200)} ` })).name).toBe('n'.repeat(200));
    const m = (await walk(auth, {})).items;
    expect(m).toHaveLength(1);
    for (const body of [{ id: m[0]!.id, name: '' }, { id: m[0]!.id, email: 'nope' }, { id: m[0]!.id, name: null }, { id: m[0]!.id, deactivated_at: null }, { id: m[0]!.id, extra: 1 }]) {
      expect((await error('members-update', body, auth)).code, JSON.stringify(body)).toBe('members.invalid_request');
    }
    expect(await error('members-update', { name: 'x' }, auth)).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'id' }] });
    for (const body of [{ limit: 0 }, { limit: 101 }, { limit: 2.5 }, { limit: '10' }, { status: 'gone' }, { cursor: 5 }, { search: 'x' }]) {
      expect((await error('members-list', body, auth)).code, JSON.stringify(body)).toBe('members.invalid_request');
    }
    expect(await ok<Member>('members-get', { id: m[0]!.id }, auth)).toEqual(m[0]);
  });

  it('lists by name (case- and accent-insensitively, then id) across pages, without duplicates or gaps, filtered by status', async () => {
    const auth = newAccount();
    const names = ['zoë', 'Émile', 'emile', 'Bob', 'bob', 'BOB', 'alice', 'Ália', 'Charlie', 'dave', 'Dave', 'éva', 'Eve', 'frank', '日本', 'Zed', 'ANNE', 'anne', 'Ω', 'ömer', 'Oscar', 'x'];
    const made = await Promise.all(names.map((name, i) => create(auth, { name, email: `n${i}@example.com` })));
    const deactivated = new Set(made.filter((_, i) => i % 3 === 0).map((m) => m.id));
    for (const id of deactivated) await ok('members-deactivate', { id }, auth);
    const current = await Promise.all(made.map((m) => ok<Member>('members-get', { id: m.id }, auth)));
    const expected = [...current].sort(byName);

    for (const limit of [1, 2, 5, 7, 25, 100]) {
      const { pages, items } = await walk(auth, { limit });
      expect(items.map((m) => m.id), `limit ${limit}`).toEqual(expected.map((m) => m.id));
      // pages are full but the last, and there is no empty trailing page
      for (const p of pages.slice(0, -1)) expect(p.items).toHaveLength(limit);
      expect(pages.at(-1)!.items.length).toBeGreaterThan(0);
      expect(items).toEqual(expected);
    }
    const active = (await walk(auth, { status: 'active', limit: 4 })).items;
    expect(active.map((m) => m.id)).toEqual(expected.filter((m) => !deactivated.has(m.id)).map((m) => m.id));
    const inactive = (await walk(auth, { status: 'deactivated', limit: 3 })).items;
    expect(inactive.map((m) => m.id)).toEqual(expected.filter((m) => deactivated.has(m.id)).map((m) => m.id));
    expect(inactive.every((m) => m.status === 'deactivated' && m.deactivated_at !== null)).toBe(true);
    // the default page size is 25
    expect((await ok<Page>('members-list', {}, auth)).items).toHaveLength(22);

    // a rename moves the member in the order; a reactivation moves it between statuses
    const first = expected[0]!;
    await ok('members-update', { id: first.id, name: 'Zzz last' }, auth);
    const after = (await walk(auth, { limit: 6 })).items;
    const renamed = await ok<Member>('members-get', { id: first.id }, auth);
    expect(after.map((m) => m.id)).toEqual([...expected.slice(1), renamed].sort(byName).map((m) => m.id));
    expect(after.findIndex((m) => m.id === first.id)).toBe(after.findIndex((m) => m.name === 'zoë') + 1);
    const back = [...deactivated][0]!;
    await ok('members-reactivate', { id: back }, auth);
    expect((await walk(auth, { status: 'active' })).items.map((m) => m.id)).toContain(back);
    expect((await walk(auth, { status: 'deactivated' })).items.map((m) => m.id)).not.toContain(back);
    expect((await walk(auth, { limit: 5 })).items.map((m) => m.id).sort()).toEqual(made.map((m) => m.id).sort());
  });

  it('reads capacity in proportion to the page, not to the account: limit + 1 entries of each status read', async () => {
    const auth = newAccount();
    const made = await Promise.all(Array.from({ length: 60 }, (_, i) => create(auth, { name: `P${String(i).padStart(2, '0')}` })));
    for (const m of made.filter((_, i) => i % 2)) await ok('members-deactivate', { id: m.id }, auth);
    await ok('members-list', { limit: 1 }, auth); // the cursor key, once per process
    const measure = async (body: Record<string, unknown>) => measureCapacity(() => ok<Page>('members-list', { limit: 3, ...body }, auth));
    const first = await measure({});
    expect(first.result.items.map((m) => m.name)).toEqual(['P00', 'P01', 'P02']);
    expect(first.usage.itemsRead).toBeLessThanOrEqual(2 * 4);
    const second = await measure({ cursor: first.result.next_cursor });
    expect(second.result.items.map((m) => m.name)).toEqual(['P03', 'P04', 'P05']);
    expect(second.usage.itemsRead).toBeLessThanOrEqual(2 * 4);
    const rare = await measure({ status: 'deactivated' });
    expect(rare.result.items.map((m) => m.name)).toEqual(['P01', 'P03', 'P05']);
    expect(rare.usage.itemsRead).toBeLessThanOrEqual(4);
  });

  it('refuses a tampered, foreign or other-filter cursor with members.invalid_cursor', async () => {
    const auth = newAccount();
    await Promise.all(Array.from({ length: 3 }, (_, i) => create(auth, { name: `C${i}` })));
    const page = await ok<Page>('members-list', { limit: 1 }, auth);
    expect(page.next_cursor).not.toBe('');
    const bad = [
      [{ limit: 1, cursor: `${page.next_cursor}x` }, auth],
      [{ limit: 1, cursor: 'garbage' }, auth],
      [{ limit: 1, cursor: page.next_cursor, status: 'active' }, auth],
      [{ limit: 1, cursor: page.next_cursor }, newAccount()],
    ] as const;
    for (const [body, who] of bad) expect(await error('members-list', body, who), JSON.stringify(body)).toMatchObject({ status: 400, code: 'members.invalid_cursor' });
    // another operation's cursor
    expect((await error('api-keys-list', { cursor: page.next_cursor }, auth)).code).toBe('api_keys.invalid_cursor');
  });

  it('isolates accounts: another account\'s member is not found, its list empty', async () => {
    const auth = newAccount();
    const other = newAccount();
    const m = await create(auth);
    for (const [op, body] of [['members-get', { id: m.id }], ['members-update', { id: m.id, name: 'Mine' }], ['members-deactivate', { id: m.id }], ['members-reactivate', { id: m.id }]] as const) {
      expect(await error(op, body, other), op).toMatchObject({ status: 404, code: 'members.not_found' });
    }
    expect(await ok<Page>('members-list', {}, other)).toEqual({ items: [], next_cursor: '' });
    expect(await ok<Member>('members-get', { id: m.id }, auth)).toEqual(m);
  });

  it('needs members:read to read and members:write to write', async () => {
    const account = newAccount();
    const m = await create(account);
    const as = (scopes: string[]) => ({ ...account, scopes });
    const forbidden = async (op: string, body: Record<string, unknown>, scopes: string[]) => {
      const r = await invoke(op, body, as(scopes));
      expect([r.status, r.body.error?.code], `${op} with ${scopes.join(' ')}`).toEqual([403, 'auth.forbidden']);
      return r.body.error!.message;
    };
    expect(await forbidden('members-get', { id: m.id }, ['contacts:write'])).toContain('members:read');
    expect(await forbidden('members-list', {}, ['pipelines:read', 'reassignments:write'])).toContain('members:read');
    for (const [op, body] of [['members-create', { email: 'x@example.com', name: 'X' }], ['members-update', { id: m.id, name: 'Y' }], ['members-deactivate', { id: m.id }], ['members-reactivate', { id: m.id }]] as const) {
      expect(await forbidden(op, body, ['members:read']), op).toContain('members:write');
    }
    expect((await invoke('members-get', { id: m.id }, as(['members:read']))).status).toBe(200);
    expect((await invoke('members-list', {}, as(['*:read']))).status).toBe(200);
    expect((await invoke('members-update', { id: m.id, name: 'Writer' }, as(['members:write']))).status).toBe(200);
    expect((await invoke('members-get', { id: m.id }, as(['members:write']))).status).toBe(200);
    // the scope names of the family and of reassignments (contract §14, §20) can be granted
    const key = await ok<{ api_key: { scopes: string[] } }>('api-keys-create', { name: 'people', scopes: ['members:write', 'reassignments:read', 'reassignments:write'] }, account);
    expect(key.api_key.scopes).toEqual(['members:write', 'reassignments:read', 'reassignments:write']);
    expect((await error('api-keys-create', { name: 'x', scopes: ['member:read'] }, account)).code).toBe('api_keys.invalid_scopes');
  });
});

describe('members limit', () => {
  // The deployment's limit is the contract's 1,000 (test/unit/member-rules.test.ts; no function of the
  // template sets CRM_MEMBER_LIMIT: test/cdk/stack.test.ts); the same rules are filled here to a lower one.
  const LIMIT = 20;
  beforeAll(() => {
    process.env.CRM_MEMBER_LIMIT = String(LIMIT);
  });
  afterAll(() => {
    delete process.env.CRM_MEMBER_LIMIT;
  });

  it('holds an account to its limit of members, under concurrent creates too', async () => {
    const auth = newAccount();
    await Promise.all(Array.from({ length: LIMIT - 10 }, (_, i) => create(auth, { name: `L${i}`, email: `l${i}@example.com` })));
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => invoke('members-create', { email: `q${i}@example.com`, name: `Q${i}` }, auth)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => [a.status, a.body.error?.code])).toEqual(Array.from({ length: 15 }, () => [400, 'members.limit_exceeded']));
    expect(refused[0]!.body.error?.details).toEqual([{ path: 'email', message: `the account has ${LIMIT} members already` }]);
    // deactivated members still count
    const { pages, items } = await walk(auth, { limit: 7 });
    expect(pages).toHaveLength(3);
    expect(items).toHaveLength(LIMIT);
    expect(new Set(items.map((m) => m.id)).size).toBe(LIMIT);
    await ok('members-deactivate', { id: items[0]!.id }, auth);
    expect((await error('members-create', { email: 'z@example.com', name: 'Z' }, auth)).code).toBe('members.limit_exceeded');
    // another account has its own count
    expect((await create(newAccount())).status).toBe('active');
  });
});

describe('members and the erasure of a contact (contract §18)', () => {
  let queue: FauxqsServer;
  beforeAll(async () => {
    // erasures-create queues its job; the test runs it (runErasure) instead of a worker.
    queue = await startFauxqs({ port: 0, logger: false });
    Object.assign(process.env, { ERASURES_QUEUE_URL: queue.createQueue('members-erasures').queueUrl, AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${queue.port}` });
  });
  afterAll(() => queue.stop());

  it('never touches a member: erasing a contact of the same address leaves it, and its suppression is the contacts\'', async () => {
    const auth = newAccount();
    const email = `Person-${randomUUID().slice(0, 8)}@Example.com`;
    const member = await create(auth, { email, name: 'Person' });
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Person', email }, auth);
    const erasure = await ok<{ id: string }>('erasures-create', { contact_id: contact.id, suppress_email: true }, auth);
    expect(await runErasure({ account_id: auth.accountId, erasure_id: erasure.id })).toBe('completed');
    expect((await error('contacts-get', { id: contact.id }, auth)).code).toBe('contacts.not_found');
    expect((await error('contacts-create', { first_name: 'Again', email }, auth)).code).toBe('contacts.email_suppressed');
    expect(await ok<Member>('members-get', { id: member.id }, auth)).toEqual(member);
    expect((await walk(auth, {})).items).toEqual([member]);
    // the member may move off the address and back: suppression is of contacts
    await ok('members-update', { id: member.id, email: 'elsewhere@example.com' }, auth);
    expect((await ok<Member>('members-update', { id: member.id, email: email.toLowerCase() }, auth)).email).toBe(email.toLowerCase());
  });
});
