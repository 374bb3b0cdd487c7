/**
 * The change log (contract §12): events-list with its cursor, filters and errors, the actor of
 * every kind of write, retention, and webhooks-replay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../shared/domain/context.js';
import { createClient } from '../../client/index.js';
import { invoke, newAccount, ok, startServer } from '../helpers/api.js';
import { type Pipeline, Receiver, registerEndpoint, startPipeline, waitFor } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_RETRY_DELAYS = '0,0,0';

type Rec = Record<string, unknown> & { id: string };
interface Ev {
  id: string;
  event: string;
  timestamp: string;
  record_id: string;
  data: Record<string, unknown>;
  previous_attributes?: Record<string, unknown>;
  actor: { type: string; id: string | null };
}
interface Page {
  items: Ev[];
  next_cursor: string;
  has_more: boolean;
}

let pipeline: Pipeline;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await new Receiver().start();
  pipeline = await startPipeline();
});
afterAll(async () => {
  await pipeline?.stop();
  await receiver?.close();
});

/** The stream worker caught up (and the deliveries sent): generous, the test machine may be busy. */
async function settle(): Promise<void> {
  await pipeline.poller!.drain(90_000);
  await pipeline.worker.drain();
}

const list = (auth: AuthContext, body: Record<string, unknown> = {}) => ok<Page>('events-list', body, auth);

/** Every event from the start (or after `cursor`), following next_cursor until has_more is false. */
async function readAll(auth: AuthContext, body: Record<string, unknown> = {}, cursor?: string): Promise<{ items: Ev[]; cursor: string }> {
  const items: Ev[] = [];
  for (;;) {
    const page = await list(auth, { ...body, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.next_cursor;
    expect(cursor).not.toBe('');
    if (!page.has_more) return { items, cursor };
  }
}

describe('events-list', { timeout: 180_000 }, () => {
  it('lists every change oldest first with previous_attributes and the actor, the same ids as the webhooks', async () => {
    const auth = newAccount();
    await registerEndpoint(auth, receiver, '/log', ['contact.created', 'contact.updated', 'contact.deleted']);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', city: 'Paris' }, auth);
    const u = await ok<Rec>('contacts-update', { id: c.id, city: 'London' }, auth);
    await ok('contacts-delete', { id: c.id }, auth);
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    await settle();

    const { items } = await readAll(auth);
    expect(items.map((e) => e.event)).toEqual(['contact.created', 'contact.updated', 'contact.deleted', 'company.created']);
    expect(items[0]).toMatchObject({ record_id: c.id, data: c, actor: { type: 'api_key', id: auth.userId } });
    expect(items[1]).toMatchObject({ data: u, previous_attributes: { city: 'Paris' } });
    expect(items[2]).toMatchObject({ record_id: c.id, data: u, actor: { type: 'api_key', id: auth.userId } });
    expect(items[3]!.record_id).toBe(co.id);
    expect(items.filter((e) => e.previous_attributes).map((e) => e.event)).toEqual(['contact.updated']);

    // The webhook bodies are the same events (same id, same body).
    const bodies = await waitFor(() => (receiver.at('/log').length >= 3 ? receiver.at('/log').map((r) => r.payload as unknown as Ev) : undefined), 30_000, 'three deliveries');
    for (const body of bodies) expect(items.find((e) => e.id === body.id)).toEqual(body);
  });

  it('pages with a cursor that stays valid: a later request returns only what happened since', async () => {
    const auth = newAccount();
    const empty = await list(auth);
    expect(empty).toMatchObject({ items: [], has_more: false });
    expect(empty.next_cursor).not.toBe('');
    for (let i = 0; i < 5; i++) await ok('companies-create', { name: `Co ${i}` }, auth);
    await settle();

    const first = await list(auth, { cursor: empty.next_cursor, limit: 2 });
    expect(first.items.map((e) => e.data.name)).toEqual(['Co 0', 'Co 1']);
    expect(first.has_more).toBe(true);
    const rest = await readAll(auth, { limit: 2 }, first.next_cursor);
    expect(rest.items.map((e) => e.data.name)).toEqual(['Co 2', 'Co 3', 'Co 4']);

    // Nothing new: the same cursor comes back with no items.
    const idle = await list(auth, { limit: 2, cursor: rest.cursor });
    expect(idle).toMatchObject({ items: [], has_more: false });
    await ok('companies-create', { name: 'Later' }, auth);
    await settle();
    const later = await list(auth, { limit: 2, cursor: idle.next_cursor });
    expect(later.items.map((e) => e.data.name)).toEqual(['Later']);
  });

  it('filters by types and record_id, and starts at since', async () => {
    const auth = newAccount();
    const a = await ok<Rec>('contacts-create', { first_name: 'A' }, auth);
    const b = await ok<Rec>('contacts-create', { first_name: 'B' }, auth);
    await settle();
    const mark = new Date().toISOString();
    for (let i = 0; i < 3; i++) await ok('contacts-update', { id: a.id, city: `City ${i}` }, auth);
    await ok('contacts-update', { id: b.id, city: 'Rome' }, auth);
    await ok('contacts-delete', { id: b.id }, auth);
    await settle();

    const history = await readAll(auth, { record_id: a.id, limit: 2 });
    expect(history.items.map((e) => [e.event, e.data.city])).toEqual([
      ['contact.created', ''],
      ['contact.updated', 'City 0'],
      ['contact.updated', 'City 1'],
      ['contact.updated', 'City 2'],
    ]);
    const deletions = await readAll(auth, { types: ['contact.deleted', 'contact.created'] });
    expect(deletions.items.map((e) => [e.event, e.record_id])).toEqual([
      ['contact.created', a.id],
      ['contact.created', b.id],
      ['contact.deleted', b.id],
    ]);
    const bUpdates = await readAll(auth, { record_id: b.id, types: ['contact.updated'] });
    expect(bUpdates.items.map((e) => e.data.city)).toEqual(['Rome']);
    const since = await readAll(auth, { since: mark });
    expect(since.items).toHaveLength(5);
    expect(since.items[0]).toMatchObject({ event: 'contact.updated', data: { city: 'City 0' } });
    const future = await list(auth, { since: '2999-01-01T00:00:00.000Z' });
    expect(future).toMatchObject({ items: [], has_more: false });
  });

  it('rejects a cursor used with other filters, a tampered one, and bad input', async () => {
    const auth = newAccount();
    const page = await list(auth, { types: ['contact.created'] });
    const other = await invoke('events-list', { cursor: page.next_cursor }, auth);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ ok: false, error: { code: 'events.invalid_cursor' } });
    const tampered = await invoke('events-list', { cursor: `${page.next_cursor}x`, types: ['contact.created'] }, auth);
    expect(tampered.body).toMatchObject({ error: { code: 'events.invalid_cursor' } });
    const foreign = await invoke('events-list', { cursor: page.next_cursor, types: ['contact.created'] }, newAccount());
    expect(foreign.body).toMatchObject({ error: { code: 'events.invalid_cursor' } });
    for (const body of [{ types: ['contact.exploded'] }, { record_id: 'nope' }, { limit: 0 }, { since: 'yesterday' }, { colour: 'red' }]) {
      const r = await invoke('events-list', body, auth);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ error: { code: 'events.invalid_request' } });
    }
  });

  it('records who made each change: the key, the system for cascades', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', company_id: co.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await settle();
    const { items } = await readAll(auth);
    const unlinked = items.find((e) => e.event === 'contact.updated' && e.record_id === c.id);
    expect(unlinked).toMatchObject({ actor: { type: 'system', id: null }, previous_attributes: { company_id: co.id, company_name: 'Acme' } });
    expect(items.find((e) => e.event === 'company.deleted')).toMatchObject({ actor: { type: 'api_key', id: auth.userId } });
  });

  it('answers events.cursor_expired once the position has left the retention window', async () => {
    const auth = newAccount();
    process.env.EVENT_RETENTION_DAYS = String(1.5 / 86_400); // 1.5 s (rounded up to 2 s)
    try {
      const first = await list(auth, { limit: 1 }); // the position before any event
      await ok('companies-create', { name: 'Old' }, auth);
      await ok('companies-create', { name: 'Older' }, auth);
      await settle();
      const r = await waitFor(async () => {
        const x = await invoke('events-list', { limit: 1, cursor: first.next_cursor }, auth);
        return x.status === 410 ? x : undefined;
      }, 30_000, 'the position to expire');
      expect(r.body).toMatchObject({ ok: false, error: { code: 'events.cursor_expired' } });
      // Without a cursor the log starts at the oldest retained event. The position expired
      // first (it is older than both events); the events leave the window a moment later.
      const empty = await waitFor(async () => {
        const page = await list(auth);
        return page.items.length === 0 ? page : undefined;
      }, 30_000, 'both events to leave the window');
      expect(empty).toMatchObject({ items: [], has_more: false });
      delete process.env.EVENT_RETENTION_DAYS;
      await ok('companies-create', { name: 'New' }, auth);
      await settle();
      expect((await list(auth)).items.map((e) => e.data.name)).toEqual(['New']);
    } finally {
      delete process.env.EVENT_RETENTION_DAYS;
    }
  });
});

describe('the client', { timeout: 180_000 }, () => {
  it('iterates the log page after page and stops when has_more is false', async () => {
    const server = await startServer();
    try {
      const crm = createClient({ baseUrl: server.baseUrl, token: server.token });
      for (let i = 0; i < 3; i++) await crm.companies.create({ name: `Client ${i}` });
      await settle();
      const names: unknown[] = [];
      for await (const e of crm.events.list({ limit: 2 })) names.push(e.data.name);
      expect(names).toEqual(['Client 0', 'Client 1', 'Client 2']);
      const page = await crm.events.list({ limit: 5 });
      expect(page.has_more).toBe(false);
      expect(page.next_cursor).not.toBe('');
    } finally {
      await server.close();
    }
  });
});

describe('webhooks-replay', { timeout: 180_000 }, () => {
  it('sends the events of a window to an endpoint created later, with the same ids, as new deliveries', async () => {
    const auth = newAccount();
    const since = new Date().toISOString();
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    await ok('contacts-update', { id: c.id, city: 'Paris' }, auth);
    await ok('companies-create', { name: 'Acme' }, auth);
    await settle();
    const logged = (await readAll(auth)).items;

    const endpoint = await registerEndpoint(auth, receiver, '/replay', ['contact.created', 'contact.updated']);
    const all = await ok<{ queued: number }>('webhooks-replay', { endpoint_id: endpoint.id, since }, auth);
    expect(all.queued).toBe(2);
    const got = await waitFor(() => (receiver.at('/replay').length >= 2 ? receiver.at('/replay') : undefined), 30_000, 'replayed deliveries');
    expect(got.every((r) => r.verified)).toBe(true);
    expect(got.map((r) => r.payload!.id).sort()).toEqual(logged.filter((e) => e.event.startsWith('contact.')).map((e) => e.id).sort());
    for (const r of got) expect(JSON.parse(r.body)).toEqual(logged.find((e) => e.id === r.payload!.id));

    const onlyUpdates = await ok<{ queued: number }>('webhooks-replay', { endpoint_id: endpoint.id, since, types: ['contact.updated', 'company.created'] }, auth);
    expect(onlyUpdates.queued).toBe(1);
    const empty = await invoke('webhooks-replay', { endpoint_id: endpoint.id, since, until: since }, auth);
    expect(empty.body).toMatchObject({ error: { code: 'webhooks.invalid_request' } }); // until must be after since
    const before = await ok<{ queued: number }>('webhooks-replay', { endpoint_id: endpoint.id, since: '2020-01-01T00:00:00.000Z', until: since }, auth);
    expect(before.queued).toBe(0);
  });

  it('refuses an inactive endpoint, an unknown one and bad input', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/inactive', ['contact.created']);
    await ok('webhooks-update', { id: endpoint.id, is_active: false }, auth);
    const since = new Date(Date.now() - 60_000).toISOString();
    const inactive = await invoke('webhooks-replay', { endpoint_id: endpoint.id, since }, auth);
    expect(inactive.status).toBe(400);
    expect(inactive.body).toMatchObject({ error: { code: 'webhooks.endpoint_inactive' } });
    const missing = await invoke('webhooks-replay', { endpoint_id: endpoint.id, since }, newAccount());
    expect(missing.status).toBe(404);
    expect((await invoke('webhooks-replay', { endpoint_id: 'x', since }, auth)).body).toMatchObject({ error: { code: 'webhooks.invalid_id' } });
    expect((await invoke('webhooks-replay', { endpoint_id: endpoint.id }, auth)).body).toMatchObject({ error: { code: 'webhooks.invalid_request' } });
    expect((await invoke('webhooks-replay', { endpoint_id: endpoint.id, since, types: ['nope'] }, auth)).body).toMatchObject({ error: { code: 'webhooks.invalid_request' } });
  });
});
