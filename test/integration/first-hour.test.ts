/**
 * What a newcomer (or a hostile client) meets first, with the contract's words and envelope:
 * the unknown-operation hint (§1), reference ids that are not UUIDs, type errors in words, the
 * Authorization header's edge cases (§2), and a 0-byte upload (§10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { startServer, type TestServer } from '../helpers/api.js';

let s: TestServer;
let queue: LocalQueue;
let imports: LocalImports;
beforeAll(async () => {
  s = await startServer();
  queue = await startLocalQueue('crm-webhook-deliveries');
  imports = await startLocalImports(queue.endpoint);
});
afterAll(async () => {
  await s?.close();
  await imports?.stop();
  await queue?.stop();
});

type Envelope = { ok: boolean; error?: { code: string; message: string; details?: { path: string; message: string }[]; request_id?: string } };

/** A POST with these header lines, written as given (duplicates and odd bytes included). */
const raw = (path: string, headers: string[], body = '{}') =>
  rawBytes(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

/** Writes the request bytes as given (for bytes a client library refuses to send). */
async function rawBytes(head: string): Promise<{ status: number; body: Envelope }> {
  const { connect } = await import('node:net');
  const url = new URL(s.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(head));
    let text = '';
    socket.on('data', (d) => (text += String(d)));
    socket.on('error', reject);
    socket.on('end', () => {
      const [statusLine, ...rest] = text.split('\r\n');
      const body = rest.join('\r\n').split('\r\n\r\n').slice(1).join('\r\n\r\n');
      try {
        // The JSON object, whether the body came chunked or not.
        resolve({ status: Number(statusLine!.split(' ')[1]), body: JSON.parse(body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1)) as Envelope });
      } catch {
        reject(new Error(`not JSON: ${text.slice(0, 300)}`));
      }
    });
  });
}

describe('contract §1: an unknown operation names the closest one and points to /docs', () => {
  it.each([
    ['contact-list', 'contacts-list'],
    ['contacts-lst', 'contacts-list'],
    ['list-contacts', 'contacts-list'],
    ['webhook-deliveries', 'webhooks-deliveries'],
    ['Contacts-Create', 'contacts-create'],
  ])('%s → did you mean %s?', async (name, near) => {
    const r = await s.call(name, {});
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('api.unknown_operation');
    expect(r.body.error?.message).toContain(`did you mean ${near}?`);
    expect(r.body.error?.message).toContain('/docs');
  });

  it('says no more than the pointer to /docs when nothing is near', async () => {
    const r = await s.call('zzzzzzzzzzzzzzzz', {});
    expect(r.status).toBe(404);
    expect(r.body.error?.message).not.toContain('did you mean');
    expect(r.body.error?.message).toContain('/docs');
  });
});

describe('validation messages in the contract words', () => {
  it('a reference field that is not a UUID says so (not "no such company")', async () => {
    const r = await s.call('contacts-create', { first_name: 'Ada', company_id: 'acme' });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('contacts.invalid_company_id');
    expect(r.body.error?.message).toMatch(/company_id must be a UUID/);
    expect(r.body.error?.details).toEqual([{ path: 'company_id', message: 'is not a UUID' }]);
    const many = await s.call('contacts-list', { company_ids: ['acme'] });
    expect(many.status).toBe(400);
    expect(JSON.stringify(many.body.error)).not.toMatch(/no such/);
    // A well-formed id of no company keeps its own words.
    const missing = await s.call('contacts-create', { first_name: 'Ada', company_id: '00000000-0000-4000-8000-00000000abcd' });
    expect(missing.body.error?.message).toMatch(/does not reference an existing company/);
  });

  it.each([
    [{ first_name: 'Ada', tags: 'vip' }, 'tags must be an array of strings', 'tags'],
    [{ first_name: 'Ada', tags: [1] }, 'tags must be an array of strings', 'tags.0'],
    [{ first_name: 'Ada', email: 5 }, 'email must be a string', 'email'],
    [{ name: 'Acme', employee_count: 'many' }, 'employee_count must be a number', 'employee_count'],
  ])('%j → "%s"', async (body, message, path) => {
    const op = 'name' in body ? 'companies' : 'contacts';
    const r = await s.call(`${op}-create`, body);
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(`${op}.invalid_request`);
    expect(r.body.error?.message).toBe(message);
    expect(r.body.error?.details?.[0]?.path).toBe(path);
    expect(JSON.stringify(r.body)).not.toMatch(/Invalid type|Expected|received/);
  });
});

describe('contract §2: the Authorization header', () => {
  it('accepts the scheme in any case', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const r = await raw('/api/contacts-list', [`Authorization: ${scheme} ${s.token}`]);
      expect([scheme, r.status]).toEqual([scheme, 200]);
    }
  });

  it('refuses two Authorization headers with a 400 envelope', async () => {
    const r = await raw('/api/contacts-list', [`Authorization: Bearer ${s.token}`, 'Authorization: Bearer someone-elses-token-123']);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ok: false, error: { code: 'api.invalid_request' } });
    expect(r.body.error?.request_id).toBeTruthy();
  });

  it('answers a 100 KB token with the 401 envelope, and a NUL in a header with the 400 envelope', async () => {
    const big = await raw('/api/contacts-list', [`Authorization: Bearer ${'a'.repeat(100 * 1024)}`]);
    expect(big.status).toBe(401);
    expect(big.body).toMatchObject({ ok: false, error: { code: 'auth.unauthorized' } });
    const nul = await raw('/api/contacts-list', [`Authorization: Bearer ${s.token}`, 'X-Note: a\u0000b']);
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({ ok: false, error: { code: 'api.invalid_request' } });
    const huge = await raw('/api/contacts-list', [`X-Pad: ${'p'.repeat(200 * 1024)}`]);
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ ok: false, error: { code: 'api.invalid_request' } });
    // The server is fine after all of it.
    expect((await s.call('contacts-list', {})).status).toBe(200);
  });
});

describe('contract §10: a 0-byte upload', () => {
  it('is stored (200, like S3), and imports-start refuses it clearly', async () => {
    const created = await s.call<{ id: string; upload_url: string }>('imports-create', { object_type: 'contacts' });
    const put = await fetch(created.body.result!.upload_url, { method: 'PUT', body: '' });
    expect(put.status).toBe(200);
    const start = await s.call('imports-start', { id: created.body.result!.id });
    expect(start.status).toBe(400);
    expect(start.body.error).toMatchObject({ code: 'imports.invalid_request', message: expect.stringMatching(/empty/) });
  });
});
