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
      disabled_reason: '',
      failing_since: null,
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
    // (`contact.merged` is an event since contract §15; `source.merged` is not: sources do not merge.)
    ['unknown event', { url: 'https://hooks.example.com/', events: ['contact.created', 'contact.archived'] }, 'webhooks.invalid_events'],
    ['event of a family without it', { url: 'https://hooks.example.com/', events: ['source.merged'] }, 'webhooks.invalid_events'],
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
    ['IPv4-compatible IPv6 (private)', 'https://[::10.0.0.1]/'],
    ['IPv4-compatible IPv6 (metadata)', 'https://[::169.254.169.254]/'],
    ['IPv4-compatible IPv6 (loopback)', 'https://[::7f00:1]/'],
    ['NAT64', 'https://[64:ff9b::a00:1]/'],
    ['6to4', 'https://[2002:a00:1::1]/'],
    ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
    ['IPv6 documentation', 'https://[2001:db8::1]/'],
    ['IPv4 documentation', 'https://203.0.113.5/'],
    ['benchmarking', 'https://198.18.0.1/'],
    ['multicast', 'https://[ff0e::1]/'],
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
    expect(await codeOf('webhooks-deliveries', { endpoint_id: randomUUID(), status: 'bogus' }, auth)).toBe('webhooks.invalid_request');
  });

  it('webhooks-update refuses IPv4-compatible addresses too (insecure mode off)', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, auth);
    for (const url of ['https://[::10.0.0.1]/', 'https://[::169.254.169.254]/', 'https://[::7f00:1]/']) {
      expect(await codeOf('webhooks-update', { id: endpoint.id, url }, auth), url).toBe('webhooks.invalid_url');
    }
  });

  it('disabled_reason and failing_since: manual on disable, cleared on enable, read-only', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, auth);
    expect(await ok('webhooks-update', { id: endpoint.id, is_active: false }, auth)).toMatchObject({ is_active: false, disabled_reason: 'manual', failing_since: null });
    expect(await ok('webhooks-get', { id: endpoint.id }, auth)).toMatchObject({ is_active: false, disabled_reason: 'manual' });
    expect(await ok('webhooks-update', { id: endpoint.id, is_active: true }, auth)).toMatchObject({ is_active: true, disabled_reason: '', failing_since: null });
    for (const body of [{ disabled_reason: '' }, { failing_since: null }]) {
      const r = await invoke('webhooks-update', { id: endpoint.id, ...body }, auth);
      expect(r.body.error?.code, JSON.stringify(body)).toBe('webhooks.invalid_request');
      expect(r.body.error?.details?.[0]?.path).toBe(Object.keys(body)[0]);
    }
  });

  it('at most 20 endpoints per account (webhooks.limit_exceeded, 400); a deletion frees a place', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await ok<{ endpoint: { id: string } }>('webhooks-create', { url: `https://hooks.example.com/${i}`, events: ['contact.created'] }, auth)).endpoint.id);
    const over = await create({ url: 'https://hooks.example.com/21', events: ['contact.created'] }, auth);
    expect(over.body.error?.code).toBe('webhooks.limit_exceeded');
    expect(over.status).toBe(400);
    expect((await ok<{ items: unknown[] }>('webhooks-list', {}, auth)).items).toHaveLength(20);
    // Other accounts are not affected.
    expect((await create({ url: 'https://hooks.example.com/x', events: ['contact.created'] })).status).toBe(200);
    await ok('webhooks-delete', { id: ids[0] }, auth);
    expect((await create({ url: 'https://hooks.example.com/again', events: ['contact.created'] }, auth)).status).toBe(200);
    expect((await create({ url: 'https://hooks.example.com/again2', events: ['contact.created'] }, auth)).body.error?.code).toBe('webhooks.limit_exceeded');
  });

  it('concurrent creates never pass the limit', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const results = await Promise.all(Array.from({ length: 26 }, (_, i) => create({ url: `https://hooks.example.com/${i}`, events: ['contact.created'] }, auth)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    expect(results.filter((r) => r.body.error?.code === 'webhooks.limit_exceeded')).toHaveLength(6);
    expect((await ok<{ items: unknown[] }>('webhooks-list', {}, auth)).items).toHaveLength(20);
  });

  it('webhooks-rotate-secret: a new secret shown once, errors in order', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const created = await ok<{ endpoint: { id: string; secret_prefix: string }; signing_secret: string }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, auth);
    const rotated = await ok<{ endpoint: Record<string, unknown>; signing_secret: string }>('webhooks-rotate-secret', { id: created.endpoint.id }, auth);
    expect(rotated.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.signing_secret).not.toBe(created.signing_secret);
    expect(rotated.endpoint).toMatchObject({ id: created.endpoint.id, secret_prefix: rotated.signing_secret.slice(0, 10), is_active: true });
    const got = await ok<Record<string, unknown>>('webhooks-get', { id: created.endpoint.id }, auth);
    expect(got).toEqual(rotated.endpoint);
    const everything = JSON.stringify([got, await ok('webhooks-list', {}, auth)]);
    for (const secret of [created.signing_secret, rotated.signing_secret]) expect(everything).not.toContain(secret.slice(10));
    expect(await codeOf('webhooks-rotate-secret', {}, auth)).toBe('webhooks.invalid_request');
    expect(await codeOf('webhooks-rotate-secret', { id: 'x' }, auth)).toBe('webhooks.invalid_id');
    expect(await codeOf('webhooks-rotate-secret', { id: randomUUID() }, auth)).toBe('webhooks.not_found');
    expect(await codeOf('webhooks-rotate-secret', { id: created.endpoint.id }, newAccount())).toBe('webhooks.not_found');
    for (const grace of [-1, 604_801, 1.5, '60', null]) {
      expect(await codeOf('webhooks-rotate-secret', { id: created.endpoint.id, grace_period_seconds: grace }, auth), String(grace)).toBe('webhooks.invalid_request');
    }
    expect(await codeOf('webhooks-rotate-secret', { id: created.endpoint.id, secret: 'x' }, auth)).toBe('webhooks.invalid_request');
    expect((await invoke('webhooks-rotate-secret', { id: created.endpoint.id, grace_period_seconds: 604_800 }, auth)).status).toBe(200);
    expect((await invoke('webhooks-rotate-secret', { id: created.endpoint.id, grace_period_seconds: 0 }, auth)).status).toBe(200);
  });

  it('webhooks-test, -resend and -recover errors', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34'] });
    const auth = newAccount();
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://hooks.example.com/', events: ['contact.created'] }, auth);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const cases: [string, unknown, string][] = [
      ['webhooks-test', {}, 'webhooks.invalid_request'],
      ['webhooks-test', { id: 'x' }, 'webhooks.invalid_id'],
      ['webhooks-test', { id: randomUUID() }, 'webhooks.not_found'],
      ['webhooks-test', { id: endpoint.id, event: 'contact.created' }, 'webhooks.invalid_request'],
      ['webhooks-resend', { endpoint_id: endpoint.id }, 'webhooks.invalid_request'],
      ['webhooks-resend', { endpoint_id: endpoint.id, delivery_id: 'x' }, 'webhooks.invalid_id'],
      ['webhooks-resend', { endpoint_id: randomUUID(), delivery_id: randomUUID() }, 'webhooks.not_found'],
      ['webhooks-resend', { endpoint_id: endpoint.id, delivery_id: randomUUID() }, 'webhooks.not_found'],
      ['webhooks-recover', { endpoint_id: endpoint.id }, 'webhooks.invalid_request'],
      ['webhooks-recover', { endpoint_id: 'x', since: hourAgo }, 'webhooks.invalid_id'],
      ['webhooks-recover', { endpoint_id: endpoint.id, since: 'yesterday' }, 'webhooks.invalid_request'],
      ['webhooks-recover', { endpoint_id: endpoint.id, since: new Date(Date.now() - 15 * 86_400_000).toISOString() }, 'webhooks.invalid_request'],
      ['webhooks-recover', { endpoint_id: endpoint.id, since: hourAgo, until: hourAgo }, 'webhooks.invalid_request'],
      ['webhooks-recover', { endpoint_id: randomUUID(), since: hourAgo }, 'webhooks.not_found'],
    ];
    for (const [op, body, code] of cases) expect(await codeOf(op, body, auth), `${op} ${JSON.stringify(body)}`).toBe(code);
    expect(await ok('webhooks-recover', { endpoint_id: endpoint.id, since: new Date(Date.now() - 13 * 86_400_000).toISOString() }, auth)).toEqual({ queued: 0 });
  });
});
