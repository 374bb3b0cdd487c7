/**
 * API keys bound to a member (contract §20, `api-keys-create { member_id }`): what such a key
 * creates has `created_by` the member's id, its events' `actor` adds `member_id` (the change log's
 * body is the webhooks'), get and list show `member_id`, and only an active member of the account
 * can be bound.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { startServer, startTestStreamWorker, type TestServer } from '../helpers/api.js';

interface Key { id: string; member_id: string | null; created_by: string }
interface Event { event: string; record_id: string; actor: { type: string; id: string | null; member_id?: string } }

let s: TestServer;
let worker: StreamPoller;
beforeAll(async () => {
  [s, worker] = await Promise.all([startServer(), startTestStreamWorker()]);
});
afterAll(async () => {
  await Promise.all([s?.close(), worker?.stop()]);
});

const result = async <T>(op: string, body: unknown, token?: string): Promise<T> => {
  const r = await s.call<T>(op, body, token ? { token } : {});
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result!;
};
const member = (name: string) => result<{ id: string }>('members-create', { email: `m-${randomUUID()}@example.com`, name });

/** The record's events once the changes worker logged them (waits on the stream, no fixed sleep). */
async function eventsOf(recordId: string, count: number): Promise<Event[]> {
  for (let i = 0; ; i++) {
    await worker.drain();
    const { items } = await result<{ items: Event[] }>('events-list', { record_id: recordId });
    if (items.length >= count || i > 20) return items;
  }
}

describe('api-keys-create { member_id }', () => {
  it('a key bound to a member: its creations have created_by the member, its events\' actor adds member_id; get and list show member_id', async () => {
    const ada = await member('Ada');
    const { api_key: key, token } = await result<{ api_key: Key; token: string }>('api-keys-create', { name: 'Ada\'s tool', scopes: ['*'], member_id: ada.id });
    expect(key).toMatchObject({ member_id: ada.id, created_by: s.auth.userId });
    expect(await result<Key>('api-keys-get', { id: key.id })).toEqual(key);
    expect((await result<{ items: Key[] }>('api-keys-list', {})).items.find((k) => k.id === key.id)).toEqual(key);
    const unbound = await result<{ api_key: Key; token: string }>('api-keys-create', { name: 'plain', scopes: ['*'] });
    expect(unbound.api_key.member_id).toBeNull();

    const contact = await result<{ id: string; created_by: string }>('contacts-create', { first_name: 'Grace' }, token);
    expect(contact.created_by).toBe(ada.id);
    await result('contacts-update', { id: contact.id, last_name: 'Hopper' }, token);
    const plain = await result<{ id: string; created_by: string }>('contacts-create', { first_name: 'Plain' }, unbound.token);
    expect(plain.created_by).toBe(s.auth.userId);

    const events = await eventsOf(contact.id, 2);
    expect(events.map((e) => [e.event, e.actor]).sort()).toEqual([
      ['contact.created', { type: 'api_key', id: key.id, member_id: ada.id }],
      ['contact.updated', { type: 'api_key', id: key.id, member_id: ada.id }],
    ]);
    expect((await eventsOf(plain.id, 1))[0]!.actor).toEqual({ type: 'api_key', id: unbound.api_key.id });
  }, 120_000);

  it('refuses an unknown, another account\'s or a deactivated member with api_keys.invalid_request and details', async () => {
    const bob = await member('Bob');
    await result('members-deactivate', { id: bob.id });
    const other = await startServer();
    try {
      const theirs = (await other.call<{ id: string }>('members-create', { email: `t-${randomUUID()}@example.com`, name: 'Theirs' })).body.result!;
      for (const id of [randomUUID(), bob.id, theirs.id]) {
        const r = await s.call('api-keys-create', { name: 'k', scopes: ['contacts:read'], member_id: id });
        expect(r.status).toBe(400);
        expect(r.body.error).toMatchObject({ code: 'api_keys.invalid_request', details: [{ path: 'member_id', message: 'is not an active member of the account' }] });
      }
      const bad = await s.call('api-keys-create', { name: 'k', scopes: ['contacts:read'], member_id: 'nope' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'api_keys.invalid_request', details: [{ path: 'member_id' }] });
    } finally {
      await other.close();
    }
  });
});
