import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import { dnsResolver } from '../../shared/webhooks/ssrf.js';
import { invoke, newAccount, ok } from '../helpers/api.js';

const realResolve = dnsResolver.resolve;
afterEach(() => {
  delete process.env.CRM_ALLOW_INSECURE_WEBHOOKS;
  dnsResolver.resolve = realResolve;
});

/** Public answers for the names used here, so no test depends on real DNS. */
const fakeDns = (map: Record<string, string[]>) => {
  dnsResolver.resolve = async (host) => {
    const found = map[host];
    if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
};

const create = (body: unknown, auth = newAccount()) => invoke('webhooks-create', body, auth);
const codeOf = async (op: string, body: unknown, auth = newAccount()) => (await invoke(op, body, auth)).body.error?.code;

describe('webhook endpoints API', () => {
  it('creates an endpoint and returns the signing secret once', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const out = await ok<{ endpoint: Record<string, unknown>; signing_secret: string }>('webhooks-create', { url: 'https://hooks.example.com/crm', events: ['contact.created', 'contact.created', 'company.deleted'], description: 'CRM sync' }, auth);
    expect(out.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(out.signing_secret.slice(6), 'base64')).toHaveLength(32);
    expect(() => new Webhook(out.signing_secret)).not.toThrow();
    expect(out.endpoint).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      account_id: auth.accountId,
      created_by: auth.userId,
      url: 'https://hooks.example.com/crm',
      description: 'CRM sync',
      secret_prefix: out.signing_secret.slice(0, 10),
      events: ['contact.created', 'company.deleted'],
      is_active: true,
      created_at: expect.stringMatching(/Z$/),
      updated_at: out.endpoint.created_at,
    });
    const got = await ok<Record<string, unknown>>('webhooks-get', { id: out.endpoint.id }, auth);
    expect(got).toEqual(out.endpoint);
    expect(JSON.stringify(got)).not.toContain(out.signing_secret.slice(10));

    // At rest the secret is ciphertext only.
    const item = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhookEndpoint(auth.accountId, out.endpoint.id as string) }))).Item!;
    expect(JSON.stringify(item)).not.toContain(out.signing_secret.slice(6));
    expect(String(item.secret_enc)).toMatch(/^aes:/);
  });

  it('lists newest first, updates partially, deletes', async () => {
    fakeDns({ 'a.example.com': ['93.184.216.34'], 'b.example.com': ['2606:2800:220:1:248:1893:25c8:1946'] });
    const auth = newAccount();
    const first = (await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://a.example.com/', events: ['contact.created'] }, auth)).endpoint;
    await new Promise((r) => setTimeout(r, 5));
    const second = (await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://b.example.com/', events: ['company.created'] }, auth)).endpoint;
    const list = await ok<{ items: { id: string }[] }>('webhooks-list', {}, auth);
    expect(list.items.map((e) => e.id)).toEqual([second.id, first.id]);

    const updated = await ok<Record<string, unknown>>('webhooks-update', { id: first.id, description: 'new', is_active: false }, auth);
    expect(updated).toMatchObject({ id: first.id, url: 'https://a.example.com/', description: 'new', is_active: false, events: ['contact.created'] });
    expect(updated.updated_at).not.toBe(updated.created_at);
    const same = await ok<Record<string, unknown>>('webhooks-update', { id: first.id, description: 'new' }, auth);
    expect(same.updated_at).toBe(updated.updated_at);
    const moved = await ok<Record<string, unknown>>('webhooks-update', { id: first.id, url: 'https://b.example.com/x', events: ['project.updated'] }, auth);
    expect(moved).toMatchObject({ url: 'https://b.example.com/x', events: ['project.updated'], description: 'new', is_active: false });

    expect(await ok('webhooks-delete', { id: first.id }, auth)).toEqual({ deleted: true });
    expect(await codeOf('webhooks-get', { id: first.id }, auth)).toBe('webhooks.not_found');
    expect(await codeOf('webhooks-delete', { id: first.id }, auth)).toBe('webhooks.not_found');
    expect((await ok<{ items: unknown[] }>('webhooks-list', {}, auth)).items).toHaveLength(1);
  });

  it('hides another account\'s endpoints and deliveries (not_found)', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const a = newAccount();
    const b = newAccount();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, a);
    for (const [op, body] of [
      ['webhooks-get', { id: endpoint.id }],
      ['webhooks-update', { id: endpoint.id, description: 'x' }],
      ['webhooks-delete', { id: endpoint.id }],
      ['webhooks-deliveries', { endpoint_id: endpoint.id }],
    ] as const) {
      const r = await invoke(op, body, b);
      expect(r.status).toBe(404);
      expect(r.body.error?.code).toBe('webhooks.not_found');
    }
    expect((await ok<{ items: unknown[] }>('webhooks-list', {}, b)).items).toEqual([]);
    expect((await ok<{ deliveries: unknown[] }>('webhooks-deliveries', { endpoint_id: endpoint.id }, a)).deliveries).toEqual([]);
  });

  it.each([
    ['url missing', { events: ['contact.created'] }, 'webhooks.url_required'],
    ['url null', { url: null, events: ['contact.created'] }, 'webhooks.url_required'],
    ['url blank', { url: '  ', events: ['contact.created'] }, 'webhooks.url_required'],
    ['url before events', {}, 'webhooks.url_required'],
    ['not a URL', { url: 'hooks.example.com', events: ['contact.created'] }, 'webhooks.invalid_url'],
    ['http', { url: 'http://hooks.example.com/', events: ['contact.created'] }, 'webhooks.invalid_url'],
    ['ftp', { url: 'ftp://hooks.example.com/', events: ['contact.created'] }, 'webhooks.invalid_url'],
    ['too long', { url: `https://hooks.example.com/${'a'.repeat(2030)}`, events: ['contact.created'] }, 'webhooks.invalid_url'],
    ['invalid url before missing events', { url: 'nope' }, 'webhooks.invalid_url'],
    ['events missing', { url: 'https://hooks.example.com/' }, 'webhooks.events_required'],
    ['events empty', { url: 'https://hooks.example.com/', events: [] }, 'webhooks.events_required'],
    ['events before address check', { url: 'https://10.0.0.1/' }, 'webhooks.events_required'],
    ['unknown event', { url: 'https://hooks.example.com/', events: ['contact.created', 'contact.merged'] }, 'webhooks.invalid_events'],
    ['wildcard', { url: 'https://hooks.example.com/', events: ['*'] }, 'webhooks.invalid_events'],
    ['events not an array', { url: 'https://hooks.example.com/', events: 'contact.created' }, 'webhooks.invalid_request'],
    ['url not a string', { url: 42, events: ['contact.created'] }, 'webhooks.invalid_request'],
    ['description not a string', { url: 'https://hooks.example.com/', events: ['contact.created'], description: 5 }, 'webhooks.invalid_request'],
    ['unknown field', { url: 'https://hooks.example.com/', events: ['contact.created'], secret: 'x' }, 'webhooks.invalid_request'],
    ['read-only field', { url: 'https://hooks.example.com/', events: ['contact.created'], secret_prefix: 'whsec_abcd' }, 'webhooks.invalid_request'],
    ['id on create', { id: randomUUID(), url: 'https://hooks.example.com/', events: ['contact.created'] }, 'webhooks.invalid_request'],
  ])('webhooks-create: %s → %s', async (_name, body, code) => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const r = await create(body);
    expect(r.body.error?.code).toBe(code);
    expect(r.status).toBe(400);
  });

  it('rejects a body that is not a JSON object', async () => {
    const r = await invoke('webhooks-create', '[1]', newAccount());
    expect(r.body.error?.code).toBe('webhooks.invalid_request');
  });

  it.each([
    ['IPv4 private', 'https://10.0.0.1/'],
    ['IPv4 192.168', 'https://192.168.1.20/'],
    ['IPv4 loopback', 'https://127.0.0.1/'],
    ['IPv4 CGNAT', 'https://100.64.0.1/'],
    ['unspecified', 'https://0.0.0.0/'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['IPv6 unique-local', 'https://[fc00::1]/'],
    ['IPv6 link-local', 'https://[fe80::1]/'],
    ['IPv4-mapped IPv6', 'https://[::ffff:10.0.0.1]/'],
    ['decimal IPv4', 'https://2130706433/'],
    ['octal IPv4', 'https://0177.0.0.1/'],
    ['hex IPv4', 'https://0x7f.0.0.1/'],
    ['metadata', 'https://169.254.169.254/latest/meta-data'],
    ['IPv6 metadata', 'https://[fd00:ec2::254]/'],
    ['localhost', 'https://localhost/'],
    ['name resolving to a private address', 'https://internal.example.com/'],
    ['name with one private address among public ones', 'https://mixed.example.com/'],
    ['name that does not resolve', 'https://nowhere.example.com/'],
  ])('deployed: %s is invalid_url', async (_name, url) => {
    fakeDns({ 'internal.example.com': ['10.1.2.3'], 'mixed.example.com': ['93.184.216.34', '192.168.0.9'], localhost: ['127.0.0.1', '::1'] });
    const r = await create({ url, events: ['contact.created'] });
    expect(r.body.error?.code).toBe('webhooks.invalid_url');
  });

  it('local mode (CRM_ALLOW_INSECURE_WEBHOOKS) allows loopback over http and https, never http elsewhere', async () => {
    process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
    fakeDns({ localhost: ['127.0.0.1'], 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'] });
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1:9/x', 'http://[::1]:9/x', 'https://localhost/hook', 'https://hooks.example.com/']) {
      expect((await create({ url, events: ['contact.created'] })).status, url).toBe(200);
    }
    for (const url of ['http://hooks.example.com/', 'http://10.0.0.1/', 'https://10.0.0.1/', 'https://internal.example.com/', 'http://169.254.169.254/']) {
      expect((await create({ url, events: ['contact.created'] })).body.error?.code, url).toBe('webhooks.invalid_url');
    }
  });

  it('webhooks-update errors, in order', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'] });
    const auth = newAccount();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, auth);
    const id = endpoint.id;
    const cases: [unknown, string][] = [
      [{ description: 'x' }, 'webhooks.invalid_request'],
      [{ id: 'not-a-uuid' }, 'webhooks.invalid_id'],
      [{ id: randomUUID(), description: 'x' }, 'webhooks.not_found'],
      [{ id, url: null }, 'webhooks.url_required'],
      [{ id, url: 'http://hooks.example.com/' }, 'webhooks.invalid_url'],
      [{ id, url: 'https://internal.example.com/' }, 'webhooks.invalid_url'],
      [{ id, events: [] }, 'webhooks.events_required'],
      [{ id, events: null }, 'webhooks.events_required'],
      [{ id, events: ['contact.exploded'] }, 'webhooks.invalid_events'],
      [{ id, is_active: 'yes' }, 'webhooks.invalid_request'],
      [{ id, created_at: '2020-01-01T00:00:00.000Z' }, 'webhooks.invalid_request'],
      [{ id, signing_secret: 'whsec_x' }, 'webhooks.invalid_request'],
    ];
    for (const [body, code] of cases) expect(await codeOf('webhooks-update', body, auth), JSON.stringify(body)).toBe(code);
    expect(await ok('webhooks-get', { id }, auth)).toMatchObject({ url: 'https://hooks.example.com/', events: ['contact.created'], is_active: true });
  });

  it('get, delete, list and deliveries errors', async () => {
    const auth = newAccount();
    expect(await codeOf('webhooks-get', {}, auth)).toBe('webhooks.invalid_request');
    expect(await codeOf('webhooks-get', { id: 'x' }, auth)).toBe('webhooks.invalid_id');
    expect(await codeOf('webhooks-get', { id: randomUUID(), extra: 1 }, auth)).toBe('webhooks.invalid_request');
    expect(await codeOf('webhooks-get', { id: randomUUID() }, auth)).toBe('webhooks.not_found');
    expect(await codeOf('webhooks-delete', { id: 12 }, auth)).toBe('webhooks.invalid_id');
    expect(await codeOf('webhooks-delete', { id: randomUUID() }, auth)).toBe('webhooks.not_found');
    expect(await codeOf('webhooks-list', { limit: 5 }, auth)).toBe('webhooks.invalid_request');
    expect(await codeOf('webhooks-deliveries', {}, auth)).toBe('webhooks.invalid_request');
    expect(await codeOf('webhooks-deliveries', { endpoint_id: 'x' }, auth)).toBe('webhooks.invalid_id');
    expect(await codeOf('webhooks-deliveries', { endpoint_id: randomUUID() }, auth)).toBe('webhooks.not_found');
    for (const limit of [0, 101, 2.5, '10', null]) {
      expect(await codeOf('webhooks-deliveries', { endpoint_id: randomUUID(), limit }, auth), String(limit)).toBe('webhooks.invalid_request');
    }
    expect(await codeOf('webhooks-deliveries', { endpoint_id: randomUUID(), status: 'failed' }, auth)).toBe('webhooks.invalid_request');
  });
});
