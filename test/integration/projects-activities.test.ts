import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };
type Page = { items: Rec[]; next_cursor: string };
const MISSING = '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f';

async function expectError(op: string, body: unknown, auth: ReturnType<typeof newAccount>, code: string, path?: string) {
  const r = await invoke(op, body, auth);
  expect(r.body.error?.code, JSON.stringify(r.body)).toBe(code);
  expect(r.status).toBe(code.endsWith('not_found') ? 404 : 400);
  if (path) expect(r.body.error?.details?.map((d) => d.path)).toContain(path);
}

async function all(op: string, body: Record<string, unknown>, auth: ReturnType<typeof newAccount>): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor = '';
  do {
    const p = await ok<Page>(op, { ...body, limit: 2, ...(cursor ? { cursor } : {}) }, auth);
    expect(p.items.length === 2 || p.next_cursor === '').toBe(true);
    out.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor);
  return out;
}

// Search entries come from the stream worker (contract §4); searches wait for it to drain.
let searchWorker: StreamPoller | undefined;
async function searchable() {
  searchWorker ??= await startTestStreamWorker();
  await searchWorker.drain();
}
afterAll(async () => {
  await searchWorker?.stop();
});

describe('projects', () => {
  it('creates a project with every field, computed company name and defaults', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    const p = await ok<Rec>('projects-create', { name: ' Engine ', company_id: co.id, contact_ids: [ada.id, ada.id.toUpperCase()], amount: 1500, currency: 'GBP', start_date: '2026-12-01', due_date: '2027-01-31', tags: ['q1'] }, auth);
    expect(Object.keys(p)).toEqual([
      'id', 'account_id', 'created_by', 'name', 'description', 'status', 'stage', 'amount', 'currency', 'company_id', 'company_name', 'contact_ids',
      'start_date', 'due_date', 'pipeline_id', 'stage_id', 'stage_entered_at', 'probability', 'rotting_since', 'stage_times', 'closed_at', 'owner_id', 'owner_name', 'tags', 'custom_fields', 'created_at', 'updated_at',
    ]);
    expect(p).toMatchObject({ name: 'Engine', status: 'open', stage: '', company_name: 'Acme', contact_ids: [ada.id], closed_at: null, custom_fields: {}, pipeline_id: null, stage_id: null, probability: null, stage_times: {} });
    expect(await ok('projects-get', { id: p.id }, auth)).toEqual(p);
  });

  it.each([
    [{}, 'projects.name_required', 'name'],
    [{ name: '  ' }, 'projects.name_required', 'name'],
    [{ name: 'P', status: 'won' }, 'projects.invalid_request', 'status'],
    [{ name: 'P', stage: 'x'.repeat(101) }, 'projects.invalid_request', 'stage'],
    [{ name: 'P', amount: -1 }, 'projects.invalid_request', 'amount'],
    [{ name: 'P', amount: 1.5 }, 'projects.invalid_request', 'amount'],
    [{ name: 'P', currency: 'gbp' }, 'projects.invalid_request', 'currency'],
    [{ name: 'P', start_date: '2026-02-30' }, 'projects.invalid_request', 'start_date'],
    [{ name: 'P', start_date: '2026-03-02', due_date: '2026-03-01' }, 'projects.invalid_request', 'due_date'],
    [{ name: 'P', company_id: MISSING }, 'projects.invalid_company_id', 'company_id'],
    [{ name: 'P', contact_ids: [MISSING] }, 'projects.invalid_contact_ids', 'contact_ids'],
    [{ name: 'P', contact_ids: ['nope'] }, 'projects.invalid_contact_ids', 'contact_ids'],
    [{ name: 'P', closed_at: '2026-01-01T00:00:00.000Z' }, 'projects.invalid_request', 'closed_at'],
    [{ name: 'P', company_name: 'X' }, 'projects.invalid_request', 'company_name'],
  ])('rejects %j with %s', async (body, code, path) => {
    const auth = newAccount();
    await expectError('projects-create', body, auth, code, path);
    expect((await ok<Page>('projects-list', {}, auth)).items).toHaveLength(0);
  });

  it('moves closed_at with status, and checks due_date against the stored start_date on update', async () => {
    const auth = newAccount();
    const p = await ok<Rec>('projects-create', { name: 'P', start_date: '2026-05-01' }, auth);
    const done = await ok<Rec>('projects-update', { id: p.id, status: 'completed' }, auth);
    expect(done.closed_at).toEqual(expect.stringMatching(/Z$/));
    const canceled = await ok<Rec>('projects-update', { id: p.id, status: 'canceled' }, auth);
    expect(canceled.closed_at).toBe(done.closed_at);
    const reopened = await ok<Rec>('projects-update', { id: p.id, status: 'open' }, auth);
    expect(reopened.closed_at).toBeNull();
    await expectError('projects-update', { id: p.id, due_date: '2026-04-30' }, auth, 'projects.invalid_request', 'due_date');
    await expectError('projects-update', { id: MISSING, name: 'x' }, auth, 'projects.not_found');
    await expectError('projects-update', { id: 'nope', name: 'x' }, auth, 'projects.invalid_id');
  });

  it('accepts custom fields of entity_type project only', async () => {
    const auth = newAccount();
    const def = await ok<Rec>('custom-fields-create', { entity_type: 'project', name: 'Priority', field_type: 'select', options: ['High', 'Low'] }, auth);
    const contactDef = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'text' }, auth);
    const p = await ok<Rec>('projects-create', { name: 'P', custom_fields: { [def.id]: 'High' } }, auth);
    expect(p.custom_fields).toEqual({ [def.id]: 'High' });
    await expectError('projects-create', { name: 'P', custom_fields: { [contactDef.id]: 'x' } }, auth, 'projects.invalid_custom_fields');
    await expectError('projects-create', { name: 'P', custom_fields: { [def.id]: 'Mid' } }, auth, 'projects.invalid_custom_fields');
  });

  it('lists with status (any of), company_id, contact_id, tags (all) and search, combined and paginated', async () => {
    const auth = newAccount();
    const [a, b] = await Promise.all([ok<Rec>('companies-create', { name: 'A Co' }, auth), ok<Rec>('companies-create', { name: 'B Co' }, auth)]);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    const specs = [
      { name: 'Alpha rollout', status: 'open', company_id: a.id, contact_ids: [ada.id], tags: ['x', 'y'] },
      { name: 'Beta rollout', status: 'completed', company_id: a.id, tags: ['x'] },
      { name: 'Gamma audit', status: 'canceled', company_id: b.id, contact_ids: [ada.id], tags: ['y'] },
      { name: 'Delta rollout', status: 'open', company_id: b.id, tags: ['x', 'y'] },
      { name: 'Epsilon', status: 'open' },
    ];
    const made: Rec[] = [];
    for (const s of specs) made.push(await ok<Rec>('projects-create', s, auth));
    await searchable();
    const names = (rs: Rec[]) => rs.map((r) => r.name);
    expect(names(await all('projects-list', {}, auth))).toEqual(['Epsilon', 'Delta rollout', 'Gamma audit', 'Beta rollout', 'Alpha rollout']);
    expect(names(await all('projects-list', { status: ['completed', 'canceled'] }, auth))).toEqual(['Gamma audit', 'Beta rollout']);
    expect(names(await all('projects-list', { company_id: a.id }, auth))).toEqual(['Beta rollout', 'Alpha rollout']);
    expect(names(await all('projects-list', { contact_id: ada.id }, auth))).toEqual(['Gamma audit', 'Alpha rollout']);
    expect(names(await all('projects-list', { tags: ['x', 'y'] }, auth))).toEqual(['Delta rollout', 'Alpha rollout']);
    expect(names(await all('projects-list', { search: 'ROLL', status: ['open'] }, auth))).toEqual(['Delta rollout', 'Alpha rollout']);
    expect(names(await all('projects-list', { search: 'rollout', company_id: b.id, tags: ['y'] }, auth))).toEqual(['Delta rollout']);
    expect(await ok<Page>('projects-list', { status: ['canceled'], company_id: a.id }, auth)).toEqual({ items: [], next_cursor: '' });
    await expectError('projects-list', { status: ['won'] }, auth, 'projects.invalid_request');
    const first = await ok<Page>('projects-list', { limit: 1, status: ['open'] }, auth);
    await expectError('projects-list', { limit: 1, status: ['completed'], cursor: first.next_cursor }, auth, 'projects.invalid_cursor');
    await expectError('projects-list', { limit: 1, status: ['open'], cursor: first.next_cursor }, newAccount(), 'projects.invalid_cursor');
  });
});

describe('activities', () => {
  it('logs a call on two contacts, shown on each timeline', async () => {
    const auth = newAccount();
    const [ada, bob] = await Promise.all([ok<Rec>('contacts-create', { first_name: 'Ada' }, auth), ok<Rec>('contacts-create', { first_name: 'Bob' }, auth)]);
    const call = await ok<Rec>('activities-create', { type: 'call', subject: 'Kick-off', direction: 'outbound', duration_seconds: 900, contact_ids: [ada.id, bob.id] }, auth);
    expect(Object.keys(call)).toEqual([
      'id', 'account_id', 'created_by', 'type', 'subject', 'body', 'occurred_at', 'due_at', 'completed', 'completed_at', 'direction', 'duration_seconds',
      'contact_ids', 'company_id', 'project_id', 'assignee_id', 'assignee_name', 'inbound_email_id', 'created_at', 'updated_at',
    ]);
    expect(call).toMatchObject({ type: 'call', due_at: null, completed: false, completed_at: null, inbound_email_id: null, occurred_at: call.created_at });
    await ok<Rec>('activities-create', { type: 'note', body: 'Only Bob', contact_ids: [bob.id] }, auth);
    expect((await all('activities-list', { contact_id: ada.id }, auth)).map((r) => r.id)).toEqual([call.id]);
    expect((await all('activities-list', { contact_id: bob.id }, auth)).map((r) => r.subject)).toEqual(['', 'Kick-off']);
    expect((await all('activities-list', { contact_id: bob.id, types: ['call', 'meeting'] }, auth)).map((r) => r.id)).toEqual([call.id]);
  });

  it.each([
    [{}, 'activities.type_required', 'type'],
    [{ type: 'fax' }, 'activities.invalid_request', 'type'],
    [{ type: 'note', due_at: '2026-12-01T00:00:00Z' }, 'activities.invalid_request', 'due_at'],
    [{ type: 'note', completed: true }, 'activities.invalid_request', 'completed'],
    [{ type: 'meeting', direction: 'inbound' }, 'activities.invalid_request', 'direction'],
    [{ type: 'email', duration_seconds: 60 }, 'activities.invalid_request', 'duration_seconds'],
    [{ type: 'call', duration_seconds: 86_401 }, 'activities.invalid_request', 'duration_seconds'],
    [{ type: 'call', direction: 'sideways' }, 'activities.invalid_request', 'direction'],
    [{ type: 'note', subject: 'x'.repeat(501) }, 'activities.invalid_request', 'subject'],
    [{ type: 'note', occurred_at: 'yesterday' }, 'activities.invalid_request', 'occurred_at'],
    [{ type: 'note', contact_ids: [MISSING] }, 'activities.invalid_contact_ids', 'contact_ids'],
    [{ type: 'note', company_id: MISSING }, 'activities.invalid_company_id', 'company_id'],
    [{ type: 'note', project_id: MISSING }, 'activities.invalid_project_id', 'project_id'],
    [{ type: 'note', inbound_email_id: MISSING }, 'activities.invalid_request', 'inbound_email_id'],
    [{ type: 'note', completed_at: '2026-01-01T00:00:00Z' }, 'activities.invalid_request', 'completed_at'],
  ])('rejects %j with %s', async (body, code, path) => {
    const auth = newAccount();
    await expectError('activities-create', body, auth, code, path);
    expect((await ok<Page>('activities-list', {}, auth)).items).toHaveLength(0);
  });

  it('keeps type fixed, sets completed_at with completed, and filters tasks by completed', async () => {
    const auth = newAccount();
    const task = await ok<Rec>('activities-create', { type: 'task', subject: 'Send offer', due_at: '2026-12-01T09:00:00+01:00' }, auth);
    expect(task.due_at).toBe('2026-12-01T08:00:00.000Z');
    await expectError('activities-update', { id: task.id, type: 'note' }, auth, 'activities.invalid_request', 'type');
    const done = await ok<Rec>('activities-update', { id: task.id, completed: true }, auth);
    expect(done.completed_at).toEqual(expect.stringMatching(/Z$/));
    const note = await ok<Rec>('activities-create', { type: 'note', occurred_at: '2026-01-02T03:04:05Z' }, auth);
    expect(note.occurred_at).toBe('2026-01-02T03:04:05.000Z');
    await expectError('activities-update', { id: note.id, completed: true }, auth, 'activities.invalid_request', 'completed');
    expect((await all('activities-list', { completed: true }, auth)).map((r) => r.id)).toEqual([task.id]);
    expect((await all('activities-list', { completed: false }, auth)).map((r) => r.id)).toEqual([note.id]);
    const undone = await ok<Rec>('activities-update', { id: task.id, completed: false }, auth);
    expect(undone.completed_at).toBeNull();
  });
});

describe('cascades through the stream worker', () => {
  let worker: StreamPoller;
  beforeAll(async () => {
    worker = await startTestStreamWorker();
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('deleting a company, a contact or a project unlinks it from projects and activities', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const [ada, bob] = await Promise.all([ok<Rec>('contacts-create', { first_name: 'Ada' }, auth), ok<Rec>('contacts-create', { first_name: 'Bob' }, auth)]);
    const p = await ok<Rec>('projects-create', { name: 'Engine', company_id: co.id, contact_ids: [ada.id, bob.id] }, auth);
    const act = await ok<Rec>('activities-create', { type: 'meeting', company_id: co.id, project_id: p.id, contact_ids: [ada.id, bob.id] }, auth);

    await ok('companies-update', { id: co.id, name: 'Acme Ltd' }, auth);
    expect((await ok<Rec>('projects-get', { id: p.id }, auth)).company_name).toBe('Acme Ltd');

    await ok('companies-delete', { id: co.id }, auth);
    // A read never shows a deleted company (meta override) ...
    expect(await ok<Rec>('projects-get', { id: p.id }, auth)).toMatchObject({ company_id: null, company_name: '' });
    expect((await ok<Rec>('activities-get', { id: act.id }, auth)).company_id).toBeNull();
    await ok('contacts-delete', { id: ada.id }, auth);
    await ok('projects-delete', { id: p.id }, auth);
    await worker.drain();
    // ... and the stream worker rewrites the stored records.
    expect((await all('projects-list', { company_id: co.id }, auth))).toEqual([]);
    const a = await ok<Rec>('activities-get', { id: act.id }, auth);
    expect(a).toMatchObject({ company_id: null, project_id: null, contact_ids: [bob.id] });
    expect(await all('activities-list', { contact_id: ada.id }, auth)).toEqual([]);
    expect(await all('activities-list', { project_id: p.id }, auth)).toEqual([]);
    expect((await all('activities-list', { contact_id: bob.id }, auth)).map((r) => r.id)).toEqual([act.id]);
  });
});

describe('concurrency', () => {
  it('20 concurrent updates of different fields of one record all succeed and all survive (4 rounds)', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const def = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'text' }, auth);
    for (let round = 0; round < 4; round++) {
      const c = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
      const fields: Record<string, unknown>[] = [
        { last_name: `L${round}` }, { city: 'Paris' }, { tags: ['vip'] }, { company_id: co.id }, { custom_fields: { [def.id]: 'Gold' } },
        { job_title: 'CTO' }, { address: '1 Rue' }, { state: 'IDF' }, { zip_code: '75001' }, { country: 'FR' },
        { notes: 'n' }, { phone: '+33 1 23 45 67 89' }, { email: `ada${round}@example.com` }, { first_name: 'Ada B' }, { last_name: `L${round}` },
        { city: 'Paris' }, { job_title: 'CTO' }, { country: 'FR' }, { state: 'IDF' }, { zip_code: '75001' },
      ];
      const replies = await Promise.all(fields.map((f) => invoke('contacts-update', { id: c.id, ...f }, auth)));
      expect(replies.map((r) => r.status)).toEqual(fields.map(() => 200));
      const got = await ok<Rec>('contacts-get', { id: c.id }, auth);
      expect(got).toMatchObject({ last_name: `L${round}`, city: 'Paris', tags: ['vip'], company_id: co.id, job_title: 'CTO', email: `ada${round}@example.com`, first_name: 'Ada B', notes: 'n' });
      expect(got.custom_fields).toEqual({ [def.id]: 'Gold' });
    }
  }, 120_000);

  it.each(['__proto__', 'constructor', 'prototype'])('custom_fields key %s is invalid_custom_fields, not silently dropped', async (key) => {
    const auth = newAccount();
    const r = await invoke('contacts-create', JSON.parse(`{"first_name":"A","custom_fields":{"${key}":"x"}}`), auth);
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('contacts.invalid_custom_fields');
    const c = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const u = await invoke('companies-update', JSON.parse(`{"id":"${c.id}","custom_fields":{"${key}":1}}`), auth);
    expect(u.body.error?.code).toBe('companies.invalid_custom_fields');
  });
});
