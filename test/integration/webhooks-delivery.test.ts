import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queryDeliveries } from '../../shared/db/webhooks.js';
import { newAccount, ok } from '../helpers/api.js';
import {
  deliveriesOf,
  type Pipeline,
  Receiver,
  registerEndpoint,
  reply,
  settledDeliveries,
  startPipeline,
  waitFor,
} from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_TIMEOUT_MS = '400';

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
beforeEach(() => {
  process.env.WEBHOOK_RETRY_DELAYS = '0,0,0';
});

describe('webhook deliveries through the local pipeline', () => {
  it('delivers a signed contact.created event that the standardwebhooks library verifies', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/ok', ['contact.created']);
    const contact = await ok<Record<string, unknown>>('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' }, auth);

    const [got] = await waitFor(() => (receiver.at('/ok').length ? receiver.at('/ok') : undefined), 5_000, 'delivery');
    expect(got!.verified).toBe(true);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(got!.payload).toMatchObject({ event: 'contact.created', data: contact });
    expect(got!.payload!.timestamp).toBe(contact.created_at);
    expect(Object.keys(got!.payload!).sort()).toEqual(['actor', 'data', 'event', 'id', 'record_id', 'timestamp']); // the change log's event (§12)

    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ id: got!.headers['webhook-id'], endpoint_id: endpoint.id, event_id: got!.payload!.id, event_type: 'contact.created', status: 'delivered', http_status_code: 200, attempt_count: 1, last_error: '', next_attempt_at: null });
    expect(delivery!.completed_at).toMatch(/Z$/);
    expect(Object.keys(delivery!).sort()).toEqual(['attempt_count', 'completed_at', 'created_at', 'endpoint_id', 'event_id', 'event_type', 'http_status_code', 'id', 'last_error', 'next_attempt_at', 'status']);
  });

  it('retries a 5xx with the same webhook-id and a fresh signature, then is delivered', async () => {
    const auth = newAccount();
    receiver.on('/flaky', (_req, res, n) => {
      res.writeHead(n < 3 ? 503 : 204);
      res.end();
    });
    const endpoint = await registerEndpoint(auth, receiver, '/flaky', ['company.created']);
    await ok('companies-create', { name: 'Flaky Inc' }, auth);
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'delivered', http_status_code: 204, attempt_count: 3, last_error: '' });
    const got = receiver.at('/flaky');
    expect(got).toHaveLength(3);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery!.id]));
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
  });

  it('marks a delivery failed after the configured attempts when the receiver always fails', async () => {
    const auth = newAccount();
    receiver.on('/down', reply(500));
    const endpoint = await registerEndpoint(auth, receiver, '/down', ['contact.created']);
    await ok('contacts-create', { first_name: 'Never' }, auth);
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', http_status_code: 500, attempt_count: 4, last_error: 'HTTP 500', next_attempt_at: null });
    expect(delivery!.completed_at).not.toBeNull();
    expect(receiver.at('/down')).toHaveLength(4);
  });

  it('records the pending state and next_attempt_at between attempts', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '2';
    const auth = newAccount();
    receiver.on('/later', (_req, res, n) => {
      res.writeHead(n === 1 ? 502 : 200);
      res.end();
    });
    const endpoint = await registerEndpoint(auth, receiver, '/later', ['contact.created']);
    const before = Date.now();
    await ok('contacts-create', { first_name: 'Later' }, auth);
    const pending = await waitFor(async () => (await deliveriesOf(auth, endpoint.id)).find((d) => d.attempt_count === 1 && d.last_error === 'HTTP 502'), 5_000, 'first failed attempt');
    expect(pending).toMatchObject({ http_status_code: 502, last_error: 'HTTP 502', completed_at: null });
    // 2 s after the failed attempt, which came after the write and before this read (however slow the machine).
    const next = Date.parse(pending.next_attempt_at!);
    expect(next).toBeGreaterThanOrEqual(before + 2_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 2_000);
    const [done] = await settledDeliveries(auth, endpoint.id, 1);
    expect(done).toMatchObject({ status: 'delivered', attempt_count: 2, http_status_code: 200, last_error: '' });
    const [first, second] = receiver.at('/later');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_500);
  });

  it('fails an attempt that times out', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0';
    const auth = newAccount();
    receiver.on('/slow', (_req, res) => {
      setTimeout(() => {
        if (!res.destroyed) res.end();
      }, 1_500);
    });
    const endpoint = await registerEndpoint(auth, receiver, '/slow', ['contact.created']);
    await ok('contacts-create', { first_name: 'Slow' }, auth);
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 2, http_status_code: null, last_error: 'timed out after 400 ms' });
  });

  it('fails an attempt whose connection is refused', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0';
    const auth = newAccount();
    const closed = await new Receiver().start();
    const url = `${closed.baseUrl}/gone`;
    await closed.close();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url, events: ['contact.created'] }, auth);
    await ok('contacts-create', { first_name: 'Refused' }, auth);
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 2, http_status_code: null, last_error: 'connection refused' });
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0';
    const auth = newAccount();
    receiver.on('/redirect', reply(302, { location: `${receiver.baseUrl}/redirect-target` }));
    const endpoint = await registerEndpoint(auth, receiver, '/redirect', ['contact.created']);
    await ok('contacts-create', { first_name: 'Moved' }, auth);
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 2, http_status_code: 302, last_error: 'redirect (HTTP 302) not followed' });
    expect(receiver.at('/redirect-target')).toHaveLength(0);
  });

  it('sends only subscribed events, with the record before deletion for *.deleted', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/filtered', ['contact.deleted', 'company.updated']);
    const company = await ok<{ id: string }>('companies-create', { name: 'Globex' }, auth);
    const contact = await ok<Record<string, unknown>>('contacts-create', { first_name: 'Hank', company_id: company.id }, auth);
    await ok('contacts-update', { id: contact.id, last_name: 'Scorpio' }, auth);
    const before = await ok<Record<string, unknown>>('contacts-get', { id: contact.id }, auth);
    await ok('contacts-delete', { id: contact.id }, auth);
    const renamed = await ok<Record<string, unknown>>('companies-update', { id: company.id, name: 'Globex Corp' }, auth);
    await settledDeliveries(auth, endpoint.id, 2);
    await pipeline.idle(); // nothing more arrives: the stream worker and the queue are idle
    const got = receiver.at('/filtered');
    expect(got.map((r) => r.payload!.event).sort()).toEqual(['company.updated', 'contact.deleted']);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(got.find((r) => r.payload!.event === 'contact.deleted')!.payload!.data).toEqual(before);
    expect(got.find((r) => r.payload!.event === 'company.updated')!.payload!.data).toEqual(renamed);
  });

  it('sends contact.updated for contacts unlinked by a company deletion', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/unlinked', ['contact.updated', 'company.deleted']);
    const company = await ok<{ id: string }>('companies-create', { name: 'Initech' }, auth);
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Peter', company_id: company.id }, auth);
    await ok('companies-delete', { id: company.id }, auth);
    await settledDeliveries(auth, endpoint.id, 2);
    const got = receiver.at('/unlinked');
    const update = got.find((r) => r.payload!.event === 'contact.updated');
    expect(update!.payload!.data).toMatchObject({ id: contact.id, company_id: null, company_name: '' });
    expect(got.find((r) => r.payload!.event === 'company.deleted')!.payload!.data).toMatchObject({ id: company.id, name: 'Initech' });
  });

  it('sends nothing to a disabled endpoint, and again after it is re-enabled', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/toggle', ['contact.created']);
    await ok('webhooks-update', { id: endpoint.id, is_active: false }, auth);
    await ok('contacts-create', { first_name: 'Quiet' }, auth);
    await pipeline.idle(); // nothing more arrives: the stream worker and the queue are idle
    expect(receiver.at('/toggle')).toHaveLength(0);
    expect(await deliveriesOf(auth, endpoint.id)).toEqual([]);
    await ok('webhooks-update', { id: endpoint.id, is_active: true }, auth);
    await ok('contacts-create', { first_name: 'Loud' }, auth);
    const [d] = await settledDeliveries(auth, endpoint.id, 1);
    expect(d!.status).toBe('delivered');
    expect(receiver.at('/toggle').map((r) => r.payload!.data.first_name)).toEqual(['Loud']);
  });

  it('stops retrying when the endpoint is disabled or deleted meanwhile', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '1,1,1';
    const auth = newAccount();
    receiver.on('/stop', reply(500));
    const disabled = await registerEndpoint(auth, receiver, '/stop', ['contact.created']);
    const deleted = await registerEndpoint(auth, receiver, '/stop', ['contact.created']);
    await ok('contacts-create', { first_name: 'Stop' }, auth);
    await waitFor(() => receiver.at('/stop').length >= 2, 5_000, 'first attempts');
    await ok('webhooks-update', { id: disabled.id, is_active: false }, auth);
    await ok('webhooks-delete', { id: deleted.id }, auth);
    const [d] = await settledDeliveries(auth, disabled.id, 1);
    expect(d).toMatchObject({ status: 'failed', attempt_count: 1, last_error: 'endpoint disabled' });
    // The deleted endpoint's delivery is no longer reachable through the API: read the record.
    const [gone] = await waitFor(async () => {
      const ds = (await queryDeliveries(auth.accountId, deleted.id, 5)).map((d) => d.item);
      return ds[0]?.status === 'failed' ? ds : undefined;
    }, 5_000, 'the deleted endpoint\'s delivery to end');
    expect(gone).toMatchObject({ attempt_count: 1, last_error: 'endpoint deleted' });
    await pipeline.idle();
    expect(receiver.at('/stop')).toHaveLength(2);
  });

  it('never crosses accounts', async () => {
    const a = newAccount();
    const b = newAccount();
    const endpointA = await registerEndpoint(a, receiver, '/tenant-a', ['contact.created']);
    const endpointB = await registerEndpoint(b, receiver, '/tenant-b', ['contact.created']);
    await ok('contacts-create', { first_name: 'OnlyA' }, a);
    await settledDeliveries(a, endpointA.id, 1);
    await pipeline.idle(); // nothing more arrives: the stream worker and the queue are idle
    expect(receiver.at('/tenant-a').map((r) => r.payload!.data.first_name)).toEqual(['OnlyA']);
    expect(receiver.at('/tenant-b')).toHaveLength(0);
    expect(await deliveriesOf(b, endpointB.id)).toEqual([]);
  });

  it('lists deliveries newest first and honours limit', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/many', ['contact.created']);
    for (const name of ['one', 'two', 'three']) await ok('contacts-create', { first_name: name }, auth);
    const all = await settledDeliveries(auth, endpoint.id, 3);
    expect(all.map((d) => d.created_at)).toEqual([...all.map((d) => d.created_at)].sort().reverse());
    const names = receiver.at('/many').map((r) => [r.headers['webhook-id'], r.payload!.data.first_name]);
    expect(all.map((d) => Object.fromEntries(names)[d.id])).toEqual(['three', 'two', 'one']);
    expect(await deliveriesOf(auth, endpoint.id, 2)).toEqual(all.slice(0, 2));
  });
});
