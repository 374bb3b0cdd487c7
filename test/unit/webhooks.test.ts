import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { retryDelays } from '../../shared/webhooks/config.js';
import { createdAtOfId, deliveryId } from '../../shared/db/webhooks.js';
import { parseRetryAfter } from '../../shared/webhooks/sender.js';
import { localSecretBox, newSigningSecret, secretPrefix } from '../../shared/webhooks/secrets.js';
import { signedHeaders } from '../../shared/webhooks/sender.js';
import { addressRange, addressRefusal, parseWebhookUrl } from '../../shared/net/ssrf.js';
import { dnsResolver, guardedLookup, urlAddressRefusal } from '../../shared/webhooks/ssrf.js';

const deployed = { allowLoopback: false, loopbackOnly: false };
const realResolve = dnsResolver.resolve;
afterEach(() => {
  dnsResolver.resolve = realResolve;
  delete process.env.WEBHOOK_RETRY_DELAYS;
});

describe('SSRF address rules', () => {
  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.1.1', 'linkLocal'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::a00:1', 'nat64'],
    ['2002:a00:1::', '6to4'],
  ])('%s is %s and refused', (ip, range) => {
    expect(addressRange(ip)).toBe(range);
    expect(addressRefusal(ip, deployed)).toContain(ip);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])('%s is public and allowed', (ip) => {
    expect(addressRefusal(ip, deployed)).toBeUndefined();
  });

  it('local mode allows loopback; http only to loopback', () => {
    expect(addressRefusal('127.0.0.1', { allowLoopback: true, loopbackOnly: false })).toBeUndefined();
    expect(addressRefusal('::1', { allowLoopback: true, loopbackOnly: true })).toBeUndefined();
    expect(addressRefusal('93.184.216.34', { allowLoopback: true, loopbackOnly: true })).toMatch(/not loopback/);
    expect(addressRefusal('10.0.0.1', { allowLoopback: true, loopbackOnly: false })).toMatch(/private/);
  });
});

describe('webhook URL syntax and scheme', () => {
  it.each([
    ['https://hooks.example.com/x', false, true],
    ['http://hooks.example.com/x', false, false],
    ['http://localhost:3000/x', false, false],
    ['http://localhost:3000/x', true, true],
    ['http://127.0.0.1/x', true, true],
    ['http://[::1]/x', true, true],
    ['http://hooks.example.com/x', true, false],
    ['http://10.0.0.1/x', true, false],
    ['ftp://hooks.example.com/', false, false],
    ['//hooks.example.com/', false, false],
    ['https://', false, false],
    [`https://a.example/${'x'.repeat(2048)}`, false, false],
  ])('%s (insecure=%s) → %s', (url, insecure, accepted) => {
    expect(parseWebhookUrl(url, insecure) !== undefined).toBe(accepted);
  });

  it('normalises decimal, octal and hex IPv4 hosts before the address check', async () => {
    for (const url of ['https://2130706433/', 'https://0177.0.0.1/', 'https://0x7f000001/', 'https://127.1/']) {
      const parsed = parseWebhookUrl(url, false)!;
      expect(parsed.hostname).toBe('127.0.0.1');
      expect(await urlAddressRefusal(parsed, false)).toMatch(/loopback/);
    }
    expect(parseWebhookUrl('https://[::ffff:10.0.0.1]/', false)!.hostname).toBe('[::ffff:a00:1]');
    expect(await urlAddressRefusal(parseWebhookUrl('https://[::ffff:10.0.0.1]/', false)!, false)).toMatch(/private/);
  });

  it('checks every address a name resolves to (injected resolver)', async () => {
    dnsResolver.resolve = async (host) => (host === 'ok.example' ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '93.184.216.34', family: 4 }, { address: 'fe80::1', family: 6 }]);
    expect(await urlAddressRefusal(new URL('https://ok.example/'), false)).toBeUndefined();
    expect(await urlAddressRefusal(new URL('https://bad.example/'), false)).toMatch(/fe80::1.*linkLocal/);
  });

  it('the connect-time lookup refuses forbidden answers and passes allowed ones', async () => {
    dnsResolver.resolve = async (host) => [{ address: host === 'evil.example' ? '192.168.1.1' : '93.184.216.34', family: 4 }];
    const lookup = guardedLookup(deployed);
    const run = (host: string, all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((resolve) => lookup(host, { all }, (error, address) => resolve({ error, address })));
    expect(await run('evil.example', false)).toMatchObject({ error: { name: 'BlockedAddressError' } });
    expect(await run('good.example', false)).toEqual({ error: null, address: '93.184.216.34' });
    expect(await run('good.example', true)).toEqual({ error: null, address: [{ address: '93.184.216.34', family: 4 }] });
  });
});

describe('delivery ids, retry schedule, secrets, signatures', () => {
  it('derives a stable version-7 UUID from the event, the endpoint and created_at (which the id gives back)', () => {
    const at = Date.parse('2026-11-22T01:16:30.123Z');
    const a = deliveryId('event-1', 'endpoint-1', at);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryId('event-1', 'endpoint-1', at)).toBe(a);
    expect(deliveryId('event-1', 'endpoint-2', at)).not.toBe(a);
    expect(deliveryId('event-2', 'endpoint-1', at)).not.toBe(a);
    expect(createdAtOfId(a)).toBe('2026-11-22T01:16:30.123Z');
    expect(createdAtOfId('9b2c1f3e-0000-5000-8000-000000000000')).toBeUndefined();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T01:00:00.000Z');
    expect(parseRetryAfter('120', now)).toBe(now + 120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(now);
    expect(parseRetryAfter('Sun, 22 Nov 2026 01:05:00 GMT', now)).toBe(now + 300_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('reads WEBHOOK_RETRY_DELAYS (default: eight attempts)', () => {
    expect(retryDelays()).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    process.env.WEBHOOK_RETRY_DELAYS = '0, 1,2.5';
    expect(retryDelays()).toEqual([0, 1, 2.5]);
    for (const bad of ['1,,2', '-1', 'soon']) {
      process.env.WEBHOOK_RETRY_DELAYS = bad;
      expect(() => retryDelays()).toThrow(/WEBHOOK_RETRY_DELAYS/);
    }
  });

  it('makes whsec_ secrets and keeps them encrypted, bound to their endpoint', async () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretPrefix(secret)).toBe(secret.slice(0, 10));
    const key = randomBytes(32);
    const box = localSecretBox(async () => key);
    const ctx = { accountId: 'a', endpointId: 'e' };
    const sealed = await box.encrypt(secret, ctx);
    expect(sealed).not.toContain(secret.slice(6));
    expect(await box.decrypt(sealed, ctx)).toBe(secret);
    await expect(box.decrypt(sealed, { accountId: 'a', endpointId: 'other' })).rejects.toThrow();
    await expect(localSecretBox(async () => randomBytes(32)).decrypt(sealed, ctx)).rejects.toThrow();
  });

  it('signs per Standard Webhooks: the library verifies, a changed body does not', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt', event: 'contact.created', timestamp: new Date().toISOString(), data: { id: 'x' } });
    const headers = signedHeaders('9b2c1f3e-0000-5000-8000-000000000000', secret, body, new Date());
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('signs with every secret of a rotation, newest first; each verifies on its own', () => {
    const [fresh, old] = [newSigningSecret(), newSigningSecret()];
    const body = '{"id":"evt"}';
    const headers = signedHeaders('9b2c1f3e-0000-5000-8000-000000000000', [fresh, old], body, new Date());
    const [first, second, extra] = headers['webhook-signature']!.split(' ');
    expect(extra).toBeUndefined();
    expect(first).toBe(signedHeaders('9b2c1f3e-0000-5000-8000-000000000000', fresh, body, new Date(Number(headers['webhook-timestamp']) * 1000))['webhook-signature']);
    expect(second).toMatch(/^v1,/);
    expect(new Webhook(fresh).verify(body, headers)).toEqual({ id: 'evt' });
    expect(new Webhook(old).verify(body, headers)).toEqual({ id: 'evt' });
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });
});
