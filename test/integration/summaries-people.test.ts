/**
 * Count summaries (contract §21): `contacts-summary` by owner and lead source, `companies-summary`
 * by owner, `activities-summary` by assignee and type (all, completed, not completed), and
 * `projects-summary` by owner. Checked against an oracle counted from the lists: every group
 * present even when empty, the null group, deactivated members while they own counted records,
 * current names, the trash, restore and merge, two accounts, a concurrent workload, the rebuild,
 * and the reads' bound (items read the same at two account sizes).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { addToCounters } from '../../shared/db/summaries.js';
import { rebuildSummaries } from '../../shared/domain/summaries.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Auth = ReturnType<typeof newAccount>;
type Rec = Record<string, unknown> & { id: string };
interface Member { id: string; name: string; status: string }
interface Group { key: string | null; label: string; count: number }
interface CountSummary { groups: Group[]; total: { count: number }; as_of: string }
interface Body { group_by: string; completed?: boolean }

const TYPES = ['note', 'task', 'call', 'meeting', 'email'];
const FIELD: Record<string, string> = { owner: 'owner_id', assignee: 'assignee_id', source: 'source_id', type: 'type' };
const NONE_LABEL: Record<string, string> = { owner: 'No owner', assignee: 'Unassigned', source: 'No source' };

let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
});
afterAll(async () => {
  await worker?.stop();
});

async function all<T = Rec>(op: string, auth: Auth, body: Record<string, unknown> = {}): Promise<T[]> {
  const out: T[] = [];
  let cursor = '';
  do {
    const page = await ok<{ items: T[]; next_cursor: string }>(op, { limit: 100, ...body, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const byName = (a: { name: string; id: string }, b: { name: string; id: string }) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id);

/** The oracle: the summary counted from the family's records one by one. */
async function oracle(auth: Auth, family: string, body: Body): Promise<Omit<CountSummary, 'as_of'>> {
  const records = (await all(`${family}-list`, auth)).filter((r) => body.completed === undefined || (r.completed === true) === body.completed);
  const field = FIELD[body.group_by]!;
  const countOf = (key: string | null) => records.filter((r) => ((r[field] as string | null | undefined) ?? null) === key).length;
  let keys: { key: string | null; label: string }[];
  if (body.group_by === 'type') keys = TYPES.map((t) => ({ key: t, label: t }));
  else if (body.group_by === 'source') keys = [...(await all<{ id: string; name: string }>('sources-list', auth)).sort(byName).map((s) => ({ key: s.id, label: s.name })), { key: null, label: NONE_LABEL.source! }];
  else {
    const active = await all<Member>('members-list', auth, { status: 'active' });
    const holding = (await all<Member>('members-list', auth, { status: 'deactivated' })).filter((m) => countOf(m.id) > 0).sort(byName);
    keys = [...[...active, ...holding].map((m) => ({ key: m.id, label: m.name })), { key: null, label: NONE_LABEL[body.group_by]! }];
  }
  const groups = keys.map((k) => ({ ...k, count: countOf(k.key) }));
  return { groups, total: { count: groups.reduce((n, g) => n + g.count, 0) } };
}

/** Polls until the summary equals the oracle (the counters follow the stream: wait on it, never a fixed sleep). */
async function expectSummary(auth: Auth, family: string, body: Body, timeoutMs = 60_000): Promise<CountSummary> {
  const deadline = Date.now() + timeoutMs;
  const expected = await oracle(auth, family, body);
  for (;;) {
    const got = await ok<CountSummary>(`${family}-summary`, body, auth);
    const { as_of: _a, ...rest } = got;
    if (JSON.stringify(rest) === JSON.stringify(expected) || Date.now() > deadline) {
      expect(rest).toEqual(expected);
      return got;
    }
    await worker.drain();
  }
}

const EVERY: [string, Body][] = [
  ['contacts', { group_by: 'owner' }],
  ['contacts', { group_by: 'source' }],
  ['companies', { group_by: 'owner' }],
  ['activities', { group_by: 'assignee' }],
  ['activities', { group_by: 'assignee', completed: true }],
  ['activities', { group_by: 'assignee', completed: false }],
  ['activities', { group_by: 'type' }],
  ['activities', { group_by: 'type', completed: true }],
  ['activities', { group_by: 'type', completed: false }],
];
const expectEvery = async (auth: Auth) => {
  await worker.drain();
  for (const [family, body] of EVERY) await expectSummary(auth, family, body);
};

const member = (auth: Auth, name: string) => ok<Member>('members-create', { email: `m-${randomUUID()}@example.com`, name }, auth);
const code = async (op: string, body: unknown, auth: Auth) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: (r.body.error?.details ?? []) as { path: string; message: string }[] };
};

describe('contacts-, companies- and activities-summary', () => {
  it('counts by owner, source, assignee and type with every group present, null groups, current names, deactivated members while they own records; two accounts apart', async () => {
    const auth = newAccount();
    const other = newAccount();
    const [ada, bob, cy] = [await member(auth, 'Ada'), await member(auth, 'Bob'), await member(auth, 'Cy')];
    const fair = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    const web = await ok<Rec>('sources-create', { name: 'Web' }, auth);
    // the empty account: every group, all zero
    const empty = await ok<CountSummary>('contacts-summary', { group_by: 'owner' }, auth);
    expect(empty.groups).toEqual([...[ada, bob, cy].map((m) => ({ key: m.id, label: m.name, count: 0 })), { key: null, label: 'No owner', count: 0 }]);
    expect(empty.total).toEqual({ count: 0 });
    expect((await ok<CountSummary>('activities-summary', { group_by: 'type' }, auth)).groups.map((g) => [g.key, g.count])).toEqual(TYPES.map((t) => [t, 0]));

    const c1 = await ok<Rec>('contacts-create', { first_name: 'a', owner_id: ada.id, source_id: fair.id }, auth);
    const c2 = await ok<Rec>('contacts-create', { first_name: 'b', owner_id: bob.id }, auth);
    await ok('contacts-create', { first_name: 'c', source_id: fair.id }, auth);
    const c4 = await ok<Rec>('contacts-create', { first_name: 'd', owner_id: ada.id, source_id: web.id }, auth);
    await ok('companies-create', { name: 'Acme', owner_id: bob.id }, auth);
    await ok('companies-create', { name: 'Unowned' }, auth);
    const task = await ok<Rec>('activities-create', { type: 'task', subject: 't1', assignee_id: ada.id }, auth);
    await ok('activities-create', { type: 'task', subject: 't2', assignee_id: bob.id, completed: true }, auth);
    await ok('activities-create', { type: 'note', subject: 'n', assignee_id: ada.id }, auth);
    await ok('activities-create', { type: 'call', subject: 'c' }, auth);
    // another account's records count only there
    const theirs = await member(other, 'Zed');
    await ok('contacts-create', { first_name: 'z', owner_id: theirs.id }, other);
    await expectEvery(auth);
    const owners = await expectSummary(auth, 'contacts', { group_by: 'owner' });
    expect(owners.groups.map((g) => [g.label, g.count])).toEqual([['Ada', 2], ['Bob', 1], ['Cy', 0], ['No owner', 1]]);
    expect(Date.parse(owners.as_of)).toBeGreaterThan(Date.now() - 120_000);
    expect((await expectSummary(auth, 'contacts', { group_by: 'source' })).groups.map((g) => [g.label, g.count])).toEqual([['Fair', 2], ['Web', 1], ['No source', 1]]);
    expect((await expectSummary(auth, 'activities', { group_by: 'assignee', completed: false })).groups.map((g) => [g.label, g.count])).toEqual([['Ada', 2], ['Bob', 0], ['Cy', 0], ['Unassigned', 1]]);
    expect((await expectSummary(other, 'contacts', { group_by: 'owner' })).groups.map((g) => [g.label, g.count])).toEqual([['Zed', 1], ['No owner', 0]]);

    // completing a task moves it between the completed groupings; a rename shows at once
    await ok('activities-update', { id: task.id, completed: true }, auth);
    await ok('members-update', { id: ada.id, name: 'Ada Lovelace' }, auth);
    await ok('sources-update', { id: web.id, name: 'Website' }, auth);
    await expectEvery(auth);
    expect((await ok<CountSummary>('contacts-summary', { group_by: 'source' }, auth)).groups.map((g) => g.label)).toEqual(['Fair', 'Website', 'No source']);

    // a deactivated member stays while it owns counted records; Cy (none) is gone once deactivated
    await ok('members-deactivate', { id: bob.id }, auth);
    await ok('members-deactivate', { id: cy.id }, auth);
    expect((await expectSummary(auth, 'contacts', { group_by: 'owner' })).groups.map((g) => [g.label, g.count])).toEqual([['Ada Lovelace', 2], ['Bob', 1], ['No owner', 1]]);
    await expectEvery(auth);

    // the trash counts nowhere, a restore counts again, a merge counts once
    await ok('contacts-delete', { id: c2.id }, auth);
    await worker.drain();
    expect((await expectSummary(auth, 'contacts', { group_by: 'owner' })).groups.map((g) => g.label)).toEqual(['Ada Lovelace', 'No owner']);
    await ok('contacts-restore', { id: c2.id }, auth);
    await ok('contacts-merge', { primary_id: c1.id, secondary_id: c4.id }, auth);
    await worker.drain();
    expect((await expectSummary(auth, 'contacts', { group_by: 'owner' })).groups.map((g) => [g.label, g.count])).toEqual([['Ada Lovelace', 1], ['Bob', 1], ['No owner', 1]]);
    await expectEvery(auth);
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
  }, 240_000);

  it('refuses bad requests with details', async () => {
    const auth = newAccount();
    expect(await code('contacts-summary', { group_by: 'type' }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_request', details: [{ path: 'group_by' }] });
    expect(await code('companies-summary', { group_by: 'source' }, auth)).toMatchObject({ status: 400, code: 'companies.invalid_request', details: [{ path: 'group_by' }] });
    expect(await code('companies-summary', {}, auth)).toMatchObject({ status: 400, code: 'companies.invalid_request' });
    expect(await code('contacts-summary', { group_by: 'owner', completed: true }, auth)).toMatchObject({ status: 400, code: 'contacts.invalid_request' });
    expect(await code('activities-summary', { group_by: 'type', completed: 'yes' }, auth)).toMatchObject({ status: 400, code: 'activities.invalid_request', details: [{ path: 'completed' }] });
    expect(await code('projects-summary', { group_by: 'owner', pipeline_id: randomUUID() }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'pipeline_id' }] });
    expect(await code('projects-summary', { group_by: 'status', owner_id: randomUUID() }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_owner_id', details: [{ path: 'owner_id' }] });
    expect(await code('projects-summary', { group_by: 'status', owner_id: 'nobody' }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'owner_id' }] });
    const mine = await member(auth, 'Mine');
    expect(await code('projects-summary', { group_by: 'owner', owner_id: mine.id }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'owner_id' }] });
    // Another account's member is no member of this one.
    const theirs = await member(newAccount(), 'Theirs');
    expect(await code('projects-summary', { group_by: 'pipeline', owner_id: theirs.id }, auth)).toMatchObject({ status: 400, code: 'projects.invalid_owner_id' });
  });

  it('reads the same items at two account sizes (bounded by the groups, never the records)', async () => {
    const auth = newAccount();
    const members = await Promise.all(Array.from({ length: 5 }, (_, i) => member(auth, `M${i}`)));
    const reads: number[] = [];
    let made = 0;
    for (const size of [20, 100]) {
      const items = Array.from({ length: size - made }, (_, k) => ({ first_name: `c${made + k}`, owner_id: members[(made + k) % 5]!.id }));
      for (let at = 0; at < items.length; at += 10) await Promise.all(items.slice(at, at + 10).map((item) => ok('contacts-create', item, auth)));
      made = size;
      await worker.drain();
      await expectSummary(auth, 'contacts', { group_by: 'owner' });
      const { result, usage } = await measureCapacity(() => ok<CountSummary>('contacts-summary', { group_by: 'owner' }, auth));
      expect(result.total.count).toBe(size);
      expect(usage.rcu).toBeLessThanOrEqual(10);
      reads.push(usage.itemsRead);
    }
    expect(reads[1]).toBe(reads[0]);
  }, 180_000);
});

describe('projects-summary by owner', () => {
  it('counts and sums by owner: every active member, deactivated ones while they own projects, then null', async () => {
    const auth = newAccount();
    const [ada, bob] = [await member(auth, 'Ada'), await member(auth, 'Bob')];
    await ok('projects-create', { name: 'a', owner_id: ada.id, amount: 1000, currency: 'USD' }, auth);
    await ok('projects-create', { name: 'b', owner_id: ada.id, amount: 500, currency: 'EUR', status: 'completed' }, auth);
    const c = await ok<Rec>('projects-create', { name: 'c', amount: 300, currency: 'USD' }, auth);
    await worker.drain();
    const want = [
      { key: ada.id, label: 'Ada', count: 2, amount: { EUR: 500, USD: 1000 }, weighted_amount: { EUR: 500, USD: 0 } },
      { key: bob.id, label: 'Bob', count: 0, amount: {}, weighted_amount: {} },
      { key: null, label: 'No owner', count: 1, amount: { USD: 300 }, weighted_amount: { USD: 0 } },
    ];
    const poll = async (expected: unknown[]) => {
      for (let i = 0; ; i++) {
        const got = await ok<{ groups: unknown[]; total: { count: number } }>('projects-summary', { group_by: 'owner' }, auth);
        if (JSON.stringify(got.groups) === JSON.stringify(expected) || i > 30) return got;
        await worker.drain();
      }
    };
    expect((await poll(want)).groups).toEqual(want);
    await ok('projects-update', { id: c.id, owner_id: bob.id }, auth);
    await ok('members-deactivate', { id: bob.id }, auth);
    await worker.drain();
    const moved = [want[0], { ...want[1], count: 1, amount: { USD: 300 }, weighted_amount: { USD: 0 } }, { ...want[2], count: 0, amount: {}, weighted_amount: {} }];
    const got = await poll(moved);
    expect(got.groups).toEqual(moved);
    expect(got.total.count).toBe(3);
    await ok('projects-delete', { id: c.id }, auth);
    await worker.drain();
    const gone = [want[0], { ...want[2], count: 0, amount: {}, weighted_amount: {} }];
    expect((await poll(gone)).groups).toEqual(gone);
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
  }, 120_000);

  it('owner_id: every other grouping within one owner\'s projects (or the unowned ones), equal to counting them', async () => {
    const auth = newAccount();
    const [ada, bob] = [await member(auth, 'Ada'), await member(auth, 'Bob')];
    const pipeline = await ok<{ id: string; stages: { id: string }[] }>('pipelines-create', { name: 'Sales', stages: [{ name: 'Lead', probability: 10 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }] }, auth);
    const [lead, won] = pipeline.stages;
    const made = [
      { name: 'a', owner_id: ada.id, amount: 1000, currency: 'USD', pipeline_id: pipeline.id, stage_id: lead!.id },
      { name: 'b', owner_id: ada.id, amount: 400, currency: 'EUR', pipeline_id: pipeline.id, stage_id: won!.id },
      { name: 'c', owner_id: bob.id, amount: 300, currency: 'USD', pipeline_id: pipeline.id, stage_id: lead!.id },
      { name: 'd', amount: 50, currency: 'USD', pipeline_id: pipeline.id, stage_id: lead!.id },
      { name: 'e', owner_id: ada.id, status: 'completed' },
    ];
    const ids: string[] = [];
    for (const p of made) ids.push((await ok<Rec>('projects-create', p, auth)).id);
    // Bob's deal goes to Ada: it leaves Bob's counts and joins hers.
    await ok('projects-update', { id: ids[2], owner_id: ada.id }, auth);
    await worker.drain();
    type Summary = { groups: { key: string | null; count: number; amount: Record<string, number>; weighted_amount: Record<string, number> }[]; total: { count: number } };
    const read = async (body: Record<string, unknown>, count: number) => {
      for (let i = 0; ; i++) {
        const got = await ok<Summary>('projects-summary', body, auth);
        if (got.total.count === count || i > 30) return got;
        await worker.drain();
      }
    };
    const adaStages = await read({ group_by: 'stage', pipeline_id: pipeline.id, owner_id: ada.id }, 3);
    expect(adaStages.groups.map((g) => [g.count, g.amount])).toEqual([[2, { USD: 1300 }], [1, { EUR: 400 }], [0, {}]]);
    expect(adaStages.groups[0]!.weighted_amount).toEqual({ USD: 130 });
    const bobStages = await read({ group_by: 'stage', pipeline_id: pipeline.id, owner_id: bob.id }, 0);
    expect(bobStages.groups.map((g) => g.count)).toEqual([0, 0, 0]);
    const unowned = await read({ group_by: 'status', owner_id: 'none' }, 1);
    expect(unowned.groups.map((g) => [g.key, g.count])).toEqual([['open', 1], ['completed', 0], ['canceled', 0]]);
    const adaStatus = await read({ group_by: 'status', owner_id: ada.id }, 4);
    expect(adaStatus.groups.map((g) => [g.key, g.count])).toEqual([['open', 2], ['completed', 2], ['canceled', 0]]);
    const adaPipelines = await read({ group_by: 'pipeline', owner_id: ada.id }, 4);
    expect(adaPipelines.groups.map((g) => [g.key, g.count])).toEqual([[pipeline.id, 3], [null, 1]]);
    const month = new Date().toISOString().slice(0, 7);
    const adaMonths = await read({ group_by: 'close_month', owner_id: ada.id, closed_from: month, closed_to: month }, 2);
    expect(adaMonths.groups).toMatchObject([{ key: month, count: 2 }]);
    // A trashed project counts nowhere in its owner's summaries; the rebuild finds nothing to correct.
    await ok('projects-delete', { id: ids[0] }, auth);
    await worker.drain();
    expect((await read({ group_by: 'status', owner_id: ada.id }, 3)).total.count).toBe(3);
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
  }, 120_000);
});

describe('the count counters under concurrent writers and the rebuild', () => {
  it('property: concurrent writers (creates, owner, source and assignee changes, completion, delete, restore) end at the oracle, and rebuild finds 0 drift', async () => {
    type Op =
      | { kind: 'contact'; owner: number | null; source: number | null }
      | { kind: 'owner'; target: number; owner: number | null }
      | { kind: 'source'; target: number; source: number | null }
      | { kind: 'activity'; type: number; assignee: number | null; completed: boolean }
      | { kind: 'assign'; target: number; assignee: number | null }
      | { kind: 'complete'; target: number; completed: boolean }
      | { kind: 'delete'; target: number; activity: boolean }
      | { kind: 'restore' };
    const who = fc.option(fc.nat({ max: 2 }), { nil: null });
    const target = fc.nat({ max: 30 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('contact' as const), owner: who, source: fc.option(fc.nat({ max: 1 }), { nil: null }) }),
      fc.record({ kind: fc.constant('owner' as const), target, owner: who }),
      fc.record({ kind: fc.constant('source' as const), target, source: fc.option(fc.nat({ max: 1 }), { nil: null }) }),
      fc.record({ kind: fc.constant('activity' as const), type: fc.nat({ max: 4 }), assignee: who, completed: fc.boolean() }),
      fc.record({ kind: fc.constant('assign' as const), target, assignee: who }),
      fc.record({ kind: fc.constant('complete' as const), target, completed: fc.boolean() }),
      fc.record({ kind: fc.constant('delete' as const), target, activity: fc.boolean() }),
      fc.record({ kind: fc.constant('restore' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 4, maxLength: 10 }), { minLength: 3, maxLength: 3 }), async (writers) => {
        const auth = newAccount();
        const members = [await member(auth, 'Ada'), await member(auth, 'Bob'), await member(auth, 'Cy')];
        const sources = [await ok<Rec>('sources-create', { name: 'Fair' }, auth), await ok<Rec>('sources-create', { name: 'Web' }, auth)];
        const contacts: string[] = [];
        const activities: { id: string; task: boolean }[] = [];
        const trashed: [string, string][] = [];
        const m = (i: number | null) => (i === null ? null : members[i]!.id);
        const s = (i: number | null) => (i === null ? null : sources[i]!.id);
        const run = async (o: Op) => {
          const contact = 'target' in o && contacts.length ? contacts[o.target % contacts.length] : undefined;
          const activity = 'target' in o && activities.length ? activities[o.target % activities.length] : undefined;
          switch (o.kind) {
            case 'contact':
              contacts.push((await ok<Rec>('contacts-create', { first_name: 'w', owner_id: m(o.owner), source_id: s(o.source) }, auth)).id);
              return;
            case 'activity': {
              const type = TYPES[o.type]!;
              activities.push({ id: (await ok<Rec>('activities-create', { type, subject: 'w', assignee_id: m(o.assignee), ...(type === 'task' ? { completed: o.completed } : {}) }, auth)).id, task: type === 'task' });
              return;
            }
            case 'owner':
              if (contact) await invoke('contacts-update', { id: contact, owner_id: m(o.owner) }, auth);
              return;
            case 'source':
              if (contact) await invoke('contacts-update', { id: contact, source_id: s(o.source) }, auth);
              return;
            case 'assign':
              if (activity) await invoke('activities-update', { id: activity.id, assignee_id: m(o.assignee) }, auth);
              return;
            case 'complete':
              if (activity?.task) await invoke('activities-update', { id: activity.id, completed: o.completed }, auth);
              return;
            case 'delete': {
              const [family, id] = o.activity ? ['activities', activity?.id] : ['contacts', contact];
              if (id && (await invoke(`${family}-delete`, { id }, auth)).status === 200) trashed.push([family, id]);
              return;
            }
            default: {
              const t = trashed.shift();
              if (t) await invoke(`${t[0]}-restore`, { id: t[1] }, auth);
            }
          }
        };
        await Promise.all(writers.map(async (ops) => { for (const o of ops) await run(o); }));
        await expectEvery(auth);
        expect(await rebuildSummaries(auth.accountId)).toEqual([]);
      }),
      { numRuns: 3 },
    );
  }, 400_000);

  it('rebuild finds and corrects an injected drift in a count grouping (the command prints it, then 0 drift)', async () => {
    const auth = newAccount();
    const ada = await member(auth, 'Ada');
    await ok('contacts-create', { first_name: 'a', owner_id: ada.id }, auth);
    await ok('activities-create', { type: 'task', subject: 't', assignee_id: ada.id }, auth);
    await expectEvery(auth);
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
    await addToCounters([
      { accountId: auth.accountId, dimension: 'contact.owner', group: ada.id, n: 3, sums: {}, counts: {} },
      { accountId: auth.accountId, dimension: 'activity.type#open', group: 'task', n: -1, sums: {}, counts: {} },
    ]);
    expect((await ok<CountSummary>('contacts-summary', { group_by: 'owner' }, auth)).groups[0]!.count).toBe(4);
    const command = async () => {
      const args = ['tsx', 'scripts/rebuild-summaries.ts', '--table', process.env.TABLE_NAME!, '--endpoint', process.env.DYNAMODB_ENDPOINT!, '--account', auth.accountId];
      return (await promisify(execFile)('npx', args, { env: process.env, timeout: 60_000 })).stdout;
    };
    const printed = await command();
    expect(printed).toContain(`${auth.accountId} contact.owner ${ada.id}: n -3`);
    expect(printed).toContain(`${auth.accountId} activity.type#open task: n +1`);
    expect(printed).toContain('2 counters corrected in 1 accounts');
    await expectEvery(auth);
    expect(await command()).toContain('0 drift (1 accounts)');
  }, 180_000);
});
