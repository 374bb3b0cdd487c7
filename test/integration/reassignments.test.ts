/**
 * Reassignments (contract §20): reassignments-create hands every record of one member on to
 * another (or leaves them unowned) as a job of the index-build queue, through the normal write
 * path (`*.updated`, actor `{ type: 'reassignment', id }`), conditionally on the owner it read;
 * members-deactivate with `reassign_to` starts one. Refused bodies start nothing; a job stopped
 * mid-way resumes once its lease runs out, writing nothing twice; another account's job is not
 * held behind one account's.
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexBuildHandler } from '../../functions/custom-fields/index-worker.js';
import { functionByName } from '../../functions/topology.js';
import { asFunction } from '../../local/iam.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import { getReassignmentItem } from '../../shared/db/index-builds.js';
import { runIndexBuild } from '../../shared/indexing/worker.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { fileIndexBuildQueue, startTestStream } from '../helpers/stream.js';

type Auth = ReturnType<typeof newAccount>;
interface Member { id: string; name: string; status: string }
interface Job { id: string; status: string; from_owner_id: string; to_owner_id: string | null; types: string[]; processed: number; changed: number; created_at: string; completed_at: string | null }
type Rec = Record<string, unknown> & { id: string };
type Event = { event: string; actor: { type: string; id: string | null }; previous_attributes?: Record<string, unknown> };

const FAMILIES = ['contacts', 'companies', 'projects', 'activities'] as const;
type Family = (typeof FAMILIES)[number];
const OWNER: Record<Family, string> = { contacts: 'owner_id', companies: 'owner_id', projects: 'owner_id', activities: 'assignee_id' };
const EVENT: Record<Family, string> = { contacts: 'contact.updated', companies: 'company.updated', projects: 'project.updated', activities: 'activity.updated' };
const NAME: Record<Family, string> = { contacts: 'owner_name', companies: 'owner_name', projects: 'owner_name', activities: 'assignee_name' };
const BODY: Record<Family, (i: number) => Record<string, unknown>> = {
  contacts: (i) => ({ first_name: `c${i}` }),
  companies: (i) => ({ name: `co${i}` }),
  projects: (i) => ({ name: `p${i}` }),
  activities: (i) => ({ type: 'note', subject: `a${i}` }),
};

const member = (auth: Auth, name: string) => ok<Member>('members-create', { email: `${name.toLowerCase()}-${randomUUID()}@example.com`, name }, auth);
const error = async (op: string, body: unknown, auth: Auth) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: r.body.error?.details ?? [] };
};
/** A record of `family` owned by `owner` (null: unowned). */
const owned = (auth: Auth, family: Family, owner: string | null, i = 0) => ok<Rec>(`${family}-create`, { ...BODY[family](i), [OWNER[family]]: owner }, auth);
const get = (auth: Auth, family: Family, id: string) => ok<Rec>(`${family}-get`, { id }, auth);
const message = (auth: Auth, job: Job) => ({ account_id: auth.accountId, build_id: job.id });
const list = (auth: Auth, body: Record<string, unknown> = {}) => ok<{ items: Job[]; next_cursor: string }>('reassignments-list', body, auth);

let stream: StreamPoller | undefined;
beforeAll(async () => {
  // reassignments-create queues the job; this file runs the index-build worker itself.
  await fileIndexBuildQueue();
  stream = await startTestStream();
});
afterAll(async () => {
  await stream?.stop();
});

/** The events of a record whose actor is the reassignment `jobId`. */
async function eventsOf(auth: Auth, recordId: string, jobId: string): Promise<Event[]> {
  const events = (await ok<{ items: Event[] }>('events-list', { record_id: recordId, limit: 100 }, auth)).items;
  return events.filter((e) => e.actor.type === 'reassignment' && e.actor.id === jobId);
}

describe('reassignments-create: what it refuses', () => {
  it('refuses a from_owner_id that is no member, a to_owner_id that is not an active member other than it, and bad bodies; nothing starts', async () => {
    const auth = newAccount();
    const other = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const gone = await member(auth, 'Gone');
    await ok('members-deactivate', { id: gone.id }, auth);
    const stranger = await member(other, 'Stranger');
    const refused: Array<[Record<string, unknown>, string, string?]> = [
      [{ from_owner_id: randomUUID(), to_owner_id: b.id }, 'from_owner_id', 'is not a member of the account'],
      [{ from_owner_id: stranger.id, to_owner_id: b.id }, 'from_owner_id', 'is not a member of the account'],
      [{ from_owner_id: a.id, to_owner_id: gone.id }, 'to_owner_id', 'is a deactivated member'],
      [{ from_owner_id: a.id, to_owner_id: stranger.id }, 'to_owner_id', 'is not a member of the account'],
      [{ from_owner_id: a.id, to_owner_id: randomUUID() }, 'to_owner_id', 'is not a member of the account'],
      [{ from_owner_id: a.id, to_owner_id: a.id }, 'to_owner_id', 'is the member whose records are handed on'],
      [{ from_owner_id: a.id }, 'to_owner_id', 'is required'],
      [{ to_owner_id: b.id }, 'from_owner_id', 'is required'],
      [{ from_owner_id: 'ada', to_owner_id: b.id }, 'from_owner_id'],
      [{ from_owner_id: a.id, to_owner_id: 'bob' }, 'to_owner_id'],
      [{ from_owner_id: a.id, to_owner_id: b.id, types: [] }, 'types'],
      [{ from_owner_id: a.id, to_owner_id: b.id, types: ['contacts', 'sources'] }, 'types.1'],
      [{ from_owner_id: a.id, to_owner_id: b.id, types: 'contacts' }, 'types'],
      [{ from_owner_id: a.id, to_owner_id: b.id, status: 'completed' }, 'status', 'field is read-only'],
      [{ from_owner_id: a.id, to_owner_id: b.id, owner: 'x' }, 'owner', 'unknown field'],
    ];
    for (const [body, path, msg] of refused) {
      const got = await error('reassignments-create', body, auth);
      expect(got, JSON.stringify(body)).toMatchObject({ status: 400, code: 'reassignments.invalid_request' });
      expect(got.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toContain(path);
      if (msg) expect(got.details.find((d: { path: string }) => d.path === path)?.message, JSON.stringify(body)).toBe(msg);
    }
    // A deactivated member's records can be handed on (from any status).
    expect((await list(auth)).items).toEqual([]);
    expect(await error('reassignments-get', { id: randomUUID() }, auth)).toMatchObject({ status: 404, code: 'reassignments.not_found' });
    expect(await error('reassignments-get', { id: 'x' }, auth)).toMatchObject({ status: 400, code: 'reassignments.invalid_id' });
    // members-deactivate refuses a bad reassign_to before anything is written.
    expect(await error('members-deactivate', { id: a.id, reassign_to: gone.id }, auth)).toMatchObject({ status: 400, code: 'members.invalid_request', details: [{ path: 'reassign_to', message: 'is a deactivated member' }] });
    expect(await ok<Member>('members-get', { id: a.id }, auth)).toMatchObject({ status: 'active' });
    expect((await list(auth)).items).toEqual([]);
  });

  it('starts a job (queued), lists the account\'s jobs newest first, pages them, and needs reassignments scopes', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const gone = await member(auth, 'Gone');
    await ok('members-deactivate', { id: gone.id }, auth);
    // The index-build queue's other jobs (here an index build) share the store: the list skips them.
    await ok('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'text', indexed: true }, auth);
    const first = await ok<Job>('reassignments-create', { from_owner_id: gone.id, to_owner_id: b.id }, auth);
    await ok('custom-fields-create', { entity_type: 'company', name: 'Tier', field_type: 'text', indexed: true }, auth);
    expect(first).toMatchObject({ status: 'queued', from_owner_id: gone.id, to_owner_id: b.id, types: [...FAMILIES], processed: 0, changed: 0, completed_at: null });
    expect(Object.keys(first).sort()).toEqual(['changed', 'completed_at', 'created_at', 'from_owner_id', 'id', 'processed', 'status', 'to_owner_id', 'types']);
    const second = await ok<Job>('reassignments-create', { from_owner_id: a.id.toUpperCase(), to_owner_id: null, types: ['activities', 'contacts', 'activities'] }, auth);
    expect(second).toMatchObject({ from_owner_id: a.id, to_owner_id: null, types: ['contacts', 'activities'] });
    expect(await ok<Job>('reassignments-get', { id: second.id }, auth)).toEqual(second);
    expect(await error('reassignments-get', { id: second.id }, newAccount())).toMatchObject({ status: 404, code: 'reassignments.not_found' });
    const page1 = await list(auth, { limit: 1 });
    expect(page1.items.map((j) => j.id)).toEqual([second.id]);
    const page2 = await list(auth, { limit: 1, cursor: page1.next_cursor });
    expect(page2).toEqual({ items: [first], next_cursor: '' });
    expect(await error('reassignments-list', { cursor: page1.next_cursor }, newAccount())).toMatchObject({ status: 400, code: 'reassignments.invalid_cursor' });
    // A job with nothing to hand on completes with nothing counted.
    expect(await runIndexBuild(message(auth, first))).toBe('completed');
    const done = await ok<Job>('reassignments-get', { id: first.id }, auth);
    expect(done).toMatchObject({ status: 'completed', processed: 0, changed: 0 });
    expect(Date.parse(done.completed_at!)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    // Scopes (contract §14): reassignments:read reads, reassignments:write creates.
    const key = async (scopes: string[]) => ({ ...auth, scopes });
    expect(await error('reassignments-create', { from_owner_id: a.id, to_owner_id: b.id }, await key(['reassignments:read', 'members:write']))).toMatchObject({ status: 403, code: 'auth.forbidden' });
    expect(await error('reassignments-list', {}, await key(['members:read']))).toMatchObject({ status: 403, code: 'auth.forbidden' });
    expect((await invoke('reassignments-list', {}, await key(['reassignments:read']))).status).toBe(200);
  });
});

describe('handing records on', () => {
  it('moves every record of all four families through the write path, actor reassignment, and leaves the others', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const moving = new Map<Family, Rec[]>();
    const others: Array<[Family, Rec]> = [];
    for (const family of FAMILIES) {
      const recs: Rec[] = [];
      for (let i = 0; i < 3; i++) recs.push(await owned(auth, family, a.id, i));
      moving.set(family, recs);
      others.push([family, await owned(auth, family, b.id)], [family, await owned(auth, family, null)]);
    }
    const job = await ok<Job>('reassignments-create', { from_owner_id: a.id, to_owner_id: b.id }, auth);
    // Pages of 2: each family takes two pages, counts saved after each.
    const saved: Array<{ processed: number; changed: number }> = [];
    expect(await runIndexBuild(message(auth, job), { reassignment: { pageSize: 2, afterPage: (j) => void saved.push({ processed: j.processed, changed: j.changed }) } })).toBe('completed');
    expect(saved.map((s) => s.processed)).toEqual([2, 3, 5, 6, 8, 9, 11, 12]);
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ status: 'completed', processed: 12, changed: 12 });
    await stream!.drain();
    for (const [family, recs] of moving) {
      for (const r of recs) {
        const now = await get(auth, family, r.id);
        expect(now, `${family} ${r.id}`).toMatchObject({ [OWNER[family]]: b.id, [NAME[family]]: 'Bob' });
        const events = await eventsOf(auth, r.id, job.id);
        expect(events.map((e) => e.event), family).toEqual([EVENT[family]]);
        expect(events[0]!.previous_attributes).toMatchObject({ [OWNER[family]]: a.id });
      }
    }
    for (const [family, r] of others) expect(await get(auth, family, r.id), family).toEqual(r);
    // Delivered again: nothing more to do, nothing written.
    expect(await runIndexBuild(message(auth, job))).toBe('completed');
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ processed: 12, changed: 12 });
  }, 120_000);

  it('to null leaves the records unowned, only in the families of types', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const contact = await owned(auth, 'contacts', a.id);
    const activity = await owned(auth, 'activities', a.id);
    const company = await owned(auth, 'companies', a.id);
    const job = await ok<Job>('reassignments-create', { from_owner_id: a.id, to_owner_id: null, types: ['contacts', 'activities'] }, auth);
    expect(await runIndexBuild(message(auth, job))).toBe('completed');
    expect(await get(auth, 'contacts', contact.id)).toMatchObject({ owner_id: null, owner_name: '' });
    expect(await get(auth, 'activities', activity.id)).toMatchObject({ assignee_id: null, assignee_name: '' });
    expect(await get(auth, 'companies', company.id)).toMatchObject({ owner_id: a.id, owner_name: 'Ada' });
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ status: 'completed', processed: 2, changed: 2 });
    expect((await ok<{ items: Rec[] }>('contacts-list', { owner_id: 'none' }, auth)).items.map((r) => r.id)).toEqual([contact.id]);
  });

  it('never overwrites an owner a user changed meanwhile: looked at (processed), not changed', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const c = await member(auth, 'Cy');
    const recs: Rec[] = [];
    for (let i = 0; i < 5; i++) recs.push(await owned(auth, 'contacts', a.id, i));
    const job = await ok<Job>('reassignments-create', { from_owner_id: a.id, to_owner_id: b.id, types: ['contacts'] }, auth);
    let byHand: string | undefined;
    const outcome = await runIndexBuild(message(auth, job), {
      reassignment: {
        pageSize: 3,
        // After the job read its first page, before it writes: a user gives one of them to Cy.
        beforeWrites: async (ids) => {
          if (byHand || ids.length === 0) return;
          byHand = ids[1]!;
          await ok('contacts-update', { id: byHand, owner_id: c.id }, auth);
        },
      },
    });
    expect(outcome).toBe('completed');
    expect(byHand).toBeDefined();
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ status: 'completed', processed: 5, changed: 4 });
    expect(await get(auth, 'contacts', byHand!)).toMatchObject({ owner_id: c.id, owner_name: 'Cy' });
    for (const r of recs.filter((x) => x.id !== byHand)) expect(await get(auth, 'contacts', r.id)).toMatchObject({ owner_id: b.id });
    await stream!.drain();
    expect(await eventsOf(auth, byHand!, job.id)).toEqual([]);
  });

  it('resumes a job whose worker died mid-way once its lease runs out, writing no record twice', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const N = 9;
    const recs: Rec[] = [];
    for (let i = 0; i < N; i++) recs.push(await owned(auth, 'projects', a.id, i));
    const job = await ok<Job>('reassignments-create', { from_owner_id: a.id, to_owner_id: b.id, types: ['projects'] }, auth);
    // The worker dies after its second saved page (pages of 2); its lease (1 ms here) runs out.
    await expect(
      runIndexBuild(message(auth, job), {
        leaseMs: 1,
        reassignment: {
          pageSize: 2,
          afterPage: (j) => {
            if (j.position === 2) throw new Error('worker died');
          },
        },
      }),
    ).rejects.toThrow('worker died');
    const half = (await getReassignmentItem(auth.accountId, job.id))!;
    expect(half).toMatchObject({ status: 'processing', position: 2, processed: 4, changed: 4 });
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ status: 'running', processed: 4, changed: 4 });
    // Another worker takes it over and finishes.
    expect(await runIndexBuild(message(auth, job), { reassignment: { pageSize: 2 } })).toBe('completed');
    expect(await ok<Job>('reassignments-get', { id: job.id }, auth)).toMatchObject({ status: 'completed', processed: N, changed: N });
    await stream!.drain();
    for (const r of recs) {
      expect(await get(auth, 'projects', r.id)).toMatchObject({ owner_id: b.id });
      expect((await eventsOf(auth, r.id, job.id)).map((e) => e.event)).toEqual(['project.updated']);
    }
  }, 120_000);

  it('members-deactivate with reassign_to deactivates the member and hands its records on (the job in reassignments-list)', async () => {
    const auth = newAccount();
    const a = await member(auth, 'Ada');
    const b = await member(auth, 'Bob');
    const contact = await owned(auth, 'contacts', a.id);
    const project = await owned(auth, 'projects', a.id);
    const activity = await owned(auth, 'activities', b.id);
    const out = await ok<Member>('members-deactivate', { id: a.id, reassign_to: b.id }, auth);
    expect(out).toMatchObject({ id: a.id, status: 'deactivated' });
    const [job] = (await list(auth)).items;
    expect(job).toMatchObject({ from_owner_id: a.id, to_owner_id: b.id, types: [...FAMILIES], status: 'queued' });
    expect(await runIndexBuild(message(auth, job!))).toBe('completed');
    expect(await get(auth, 'contacts', contact.id)).toMatchObject({ owner_id: b.id, owner_name: 'Bob' });
    expect(await get(auth, 'projects', project.id)).toMatchObject({ owner_id: b.id, owner_name: 'Bob' });
    // Bob deactivated with null: his records become unowned.
    await ok<Member>('members-deactivate', { id: b.id, reassign_to: null }, auth);
    const [second] = (await list(auth)).items;
    expect(second).toMatchObject({ from_owner_id: b.id, to_owner_id: null });
    expect(await runIndexBuild(message(auth, second!))).toBe('completed');
    expect(await ok<Job>('reassignments-get', { id: second!.id }, auth)).toMatchObject({ processed: 3, changed: 3 });
    expect(await get(auth, 'contacts', contact.id)).toMatchObject({ owner_id: null });
    expect(await get(auth, 'activities', activity.id)).toMatchObject({ assignee_id: null, assignee_name: '' });
  });
});

describe('two accounts', () => {
  it("one account's job does not touch another's records, nor hold its job behind it", async () => {
    const A = newAccount();
    const B = newAccount();
    const setUp = async (auth: Auth, n: number) => {
      const from = await member(auth, 'From');
      const to = await member(auth, 'To');
      const recs: Rec[] = [];
      for (let i = 0; i < n; i++) recs.push(await owned(auth, 'contacts', from.id, i));
      const job = await ok<Job>('reassignments-create', { from_owner_id: from.id, to_owner_id: to.id, types: ['contacts'] }, auth);
      return { from, to, recs, job };
    };
    const ja = await setUp(A, 6);
    const jb = await setUp(B, 3);
    const event = (auth: Auth, job: Job) => ({ Records: [{ messageId: `m-${job.id}`, body: JSON.stringify(message(auth, job)) }] }) as unknown as SQSEvent;
    const fn = functionByName('indexBuildWorker')!;
    // A's job holds a worker, stopped after its first page until B's is done …
    let reached: () => void = () => undefined;
    const atFirstPage = new Promise<void>((resolve) => (reached = resolve));
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const busy = asFunction(fn, indexBuildHandler({ reassignment: { pageSize: 2, afterPage: async () => { reached(); await opened; } } }))(event(A, ja.job));
    await atFirstPage;
    // … while B's runs to its end on another worker.
    expect(await asFunction(fn, indexBuildHandler())(event(B, jb.job))).toEqual({ batchItemFailures: [] });
    expect(await ok<Job>('reassignments-get', { id: jb.job.id }, B)).toMatchObject({ status: 'completed', processed: 3, changed: 3 });
    expect(await ok<Job>('reassignments-get', { id: ja.job.id }, A)).toMatchObject({ status: 'running', processed: 2 });
    for (const r of jb.recs) expect(await get(B, 'contacts', r.id)).toMatchObject({ owner_id: jb.to.id });
    // A's records past its first page are untouched by B's job.
    const aNow = await Promise.all(ja.recs.map((r) => get(A, 'contacts', r.id)));
    expect(aNow.filter((r) => r.owner_id === ja.from.id)).toHaveLength(4);
    open();
    expect(await busy).toEqual({ batchItemFailures: [] });
    expect(await ok<Job>('reassignments-get', { id: ja.job.id }, A)).toMatchObject({ status: 'completed', processed: 6, changed: 6 });
    // Another account cannot read A's job.
    expect(await error('reassignments-get', { id: ja.job.id }, B)).toMatchObject({ status: 404, code: 'reassignments.not_found' });
  }, 120_000);
});
