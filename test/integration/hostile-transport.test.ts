/**
 * Hostile transport (contract §1, §3, §5), generated from the registry where it concerns bodies:
 * bodies nested past the depth limit are every operation's `<family>.invalid_request` (with an
 * Idempotency-Key too); `custom_fields` of the wrong JSON type is the type error in every operation
 * that takes it; an oversized body gets its 413 on a connection a keep-alive client can keep
 * using, and with fetch; and concurrent merges and deletes over keep-alive connections, idle past
 * Node's default keep-alive timeout in between, all get an answer.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { KEEP_ALIVE_MS } from '../../local/server.js';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from '../../shared/http/operation.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';
import { ENTITIES } from '../../shared/schemas/entities/index.js';
import { invoke, newAccount, ok, startServer, type TestServer } from '../helpers/api.js';

type Json = Record<string, unknown>;
type Schema = Json & { properties?: Record<string, Schema>; required?: string[]; items?: Schema; $ref?: string; examples?: unknown[] };

const doc = buildOpenApiDocument(operations);
const components = doc.components.schemas as Record<string, Schema>;
const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? resolve(components[s.$ref.split('/').pop()!]) : s);
const requestSchema = (op: string): Schema =>
  resolve((doc.paths[`/api/${op}`] as { post: { requestBody?: { content: Record<string, { schema: Schema }> } } }).post.requestBody?.content['application/json']?.schema) ?? {};

/** `levels` nested containers, objects and arrays mixed as `kinds` says, around a string that looks like brackets. */
function nested(levels: number, kinds: readonly boolean[]): string {
  let open = '';
  let close = '';
  for (let i = 0; i < levels; i++) {
    const object = kinds[i % kinds.length]!;
    open += object ? '{"k\\"[{":' : '[';
    close = (object ? '}' : ']') + close;
  }
  return `${open}"]]}}\\\\"${close}`;
}

describe('bodies nested deeper than the limit', () => {
  const auth = newAccount();

  it(`every operation answers <family>.invalid_request, with an Idempotency-Key too (${operations.length} operations)`, async () => {
    // The reported body: 3,000 levels inside `items`.
    const repro = `{"items":[${'['.repeat(3000)}${']'.repeat(3000)}]}`;
    for (const entry of operations) {
      for (const headers of [{ 'idempotency-key': `k-${randomUUID()}` }, {}] as Record<string, string>[]) {
        const reply = await invoke(entry.name, repro, auth, headers);
        expect(reply.status, `${entry.name} ${JSON.stringify(reply.body)}`).toBe(400);
        expect(reply.body.error?.code, entry.name).toBe(`${entry.family}.invalid_request`);
        expect(reply.body.error?.message, entry.name).toContain(`deeper than ${MAX_BODY_DEPTH} levels`);
      }
    }
  }, 120_000);

  it('the limit is exact: one level more is refused for its depth, the limit itself is not', async () => {
    const batchCreates = operations.filter((o) => o.name.endsWith('-batch-create'));
    expect(batchCreates.length).toBeGreaterThan(2);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...batchCreates), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), async (entry, kinds) => {
        // `{"items":[ … ]}` is two levels: the rest makes the body exactly the limit, or one more.
        const at = await invoke(entry.name, `{"items":[${nested(MAX_BODY_DEPTH - 2, kinds)}]}`, auth, { 'idempotency-key': randomUUID() });
        expect(at.status, JSON.stringify(at.body)).toBeLessThan(500);
        expect(at.body.error?.message ?? '').not.toContain('deeper than');
        const over = await invoke(entry.name, `{"items":[${nested(MAX_BODY_DEPTH - 1, kinds)}]}`, auth, { 'idempotency-key': randomUUID() });
        expect(over.status).toBe(400);
        expect(over.body.error?.code).toBe(`${entry.family}.invalid_request`);
        expect(over.body.error?.message).toContain('deeper than');
      }),
      { numRuns: 20, seed: 33 },
    );
  }, 60_000);
});

describe('custom_fields of the wrong JSON type', () => {
  const auth = newAccount();
  /** Every operation that takes custom_fields: at the top of its body, or in each of its `items`. */
  const takers = operations.flatMap((entry) => {
    const schema = requestSchema(entry.name);
    if (schema.properties?.custom_fields) return [{ entry, inItems: false, schema }];
    const item = resolve(schema.properties?.items?.items);
    return item?.properties?.custom_fields ? [{ entry, inItems: true, schema: item }] : [];
  });
  const examples = (s: Schema | undefined): unknown => resolve(s)?.examples?.[0];
  const typeOf = (family: string) => ENTITIES.find((e) => e.family === family)!.type;
  const createInput = (family: string) => components[`${typeOf(family)[0]!.toUpperCase()}${typeOf(family).slice(1)}CreateInput`]!;
  /** A valid body but for custom_fields: an existing record's id when the body takes one, else the create's required fields. */
  const ids = new Map<string, string>();
  async function base(family: string, schema: Schema): Promise<Json> {
    if (schema.required?.includes('id')) {
      if (!ids.has(family)) ids.set(family, (await ok<{ id: string }>(`${family}-create`, await base(family, createInput(family)), auth)).id);
      return { id: ids.get(family) };
    }
    const create = createInput(family);
    const body: Json = Object.fromEntries((create.required ?? []).map((f) => [f, examples(create.properties![f])]));
    // An upsert matches by its lookup field (contacts' email, companies' domain): a new value.
    const lookup = ENTITIES.find((e) => e.family === family)!.lookup;
    if (lookup) body[lookup.field] = lookup.index === 'email' ? `${randomUUID()}@example.com` : `${randomUUID()}.example.com`;
    return body;
  }

  it('is generated over every operation that takes it (create, update and the batches of contacts, companies, projects)', () => {
    const names = takers.map((t) => t.entry.name);
    for (const family of ['contacts', 'companies', 'projects']) {
      for (const verb of ['create', 'update', 'batch-create', 'batch-update']) expect(names).toContain(`${family}-${verb}`);
    }
    expect(names).toContain('contacts-batch-upsert');
  });

  it('answers the type error <family>.invalid_request at path custom_fields', async () => {
    const wrong: unknown[] = [[], [1], ['x'], [{}], [null], 'x', 5, true];
    let cases = 0;
    for (const { entry, inItems, schema } of takers) {
      for (const value of wrong) {
        const body = { ...(await base(entry.family, schema)), custom_fields: value };
        const reply = await invoke(entry.name, inItems ? { items: [body] } : body, auth);
        const context = `${entry.name} custom_fields=${JSON.stringify(value)} → ${reply.status} ${JSON.stringify(reply.body)}`;
        // A batch answers a bad item inside its 200 result (contract §13).
        const error = inItems ? (reply.body.result as { results: { ok: boolean; error?: Reply['error'] }[] } | undefined)?.results[0]?.error : reply.body.error;
        expect(reply.status, context).toBe(inItems ? 200 : 400);
        expect(error?.code, context).toBe(`${entry.family}.invalid_request`);
        expect(error?.details?.map((d) => d.path), context).toEqual([expect.stringMatching(/^(items\.0\.)?custom_fields$/)]);
        cases++;
      }
    }
    expect(cases).toBe(takers.length * wrong.length);
  }, 120_000);
});
type Reply = { error?: { code: string; message: string; details?: { path: string; message: string }[] } };

interface Answer {
  status: number;
  body: Json;
  reused: boolean;
  headers: Record<string, string | string[] | undefined>;
}

/** A POST on `agent`; rejects when the connection fails before an answer. */
function post(server: TestServer, agent: Agent, op: string, body: string | Buffer, token = server.token): Promise<Answer> {
  return new Promise((resolvePost, reject) => {
    const req = request(`${server.baseUrl}/api/${op}`, { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePost({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json, reused: req.reusedSocket, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the local server over keep-alive connections', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const sizes = [300_000, 700_000, 1_000_000, 2_000_000];
  const oversized = (bytes: number) => Buffer.from(`{"first_name":"${'x'.repeat(bytes - 20)}"}`);

  it('a body over 256 KiB gets its 413, and a keep-alive client goes on on the same connection (10 tries per size)', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      let reusedAfter413 = 0;
      for (const size of sizes) {
        expect(size).toBeGreaterThan(MAX_BODY_BYTES);
        for (let i = 0; i < 10; i++) {
          const big = await post(server, agent, 'contacts-create', oversized(size));
          expect(big.status, `${size} bytes, try ${i}`).toBe(413);
          expect((big.body.error as Json).code).toBe('api.payload_too_large');
          const next = await post(server, agent, 'contacts-list', '{"limit":1}');
          expect(next.status, `the request after the 413 (${size} bytes, try ${i})`).toBe(200);
          if (next.reused) reusedAfter413++;
        }
      }
      // The 413 did not cost the connection.
      expect(reusedAfter413).toBe(sizes.length * 10);
    } finally {
      agent.destroy();
    }
  }, 120_000);

  it('fetch with a body over 256 KiB gets the 413, never a reset (10 tries per size)', async () => {
    for (const size of sizes) {
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${server.baseUrl}/api/contacts-create`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: oversized(size) });
        expect(res.status, `${size} bytes, try ${i}`).toBe(413);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('api.payload_too_large');
      }
    }
  }, 120_000);

  it('a body too large to drain gets its 413 before the connection closes', async () => {
    const huge = oversized(MAX_BODY_BYTES + 17 * 1024 * 1024);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const big = await post(server, agent, 'contacts-create', huge);
        expect(big.status).toBe(413);
        expect(big.headers.connection).toBe('close');
        expect((await post(server, agent, 'contacts-list', '{"limit":1}')).status).toBe(200);
        const res = await fetch(`${server.baseUrl}/api/contacts-create`, { method: 'POST', headers: { authorization: `Bearer ${server.token}` }, body: huge });
        expect(res.status).toBe(413);
        await res.body?.cancel();
      }
    } finally {
      agent.destroy();
    }
  }, 120_000);

  it('answers a request target that URL() refuses (`//`, `//a:b:c`) with the envelope, and goes on', async () => {
    const port = Number(new URL(server.baseUrl).port);
    for (const target of ['//', '//a:b:c/api/contacts-list', '//[::1']) {
      const raw = await new Promise<string>((resolveRaw, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`));
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
        socket.on('end', () => resolveRaw(text));
        socket.on('error', reject);
      });
      expect(raw, target).toMatch(/^HTTP\/1\.1 404 /);
      expect(raw, target).toContain('"api.unknown_operation"');
    }
    expect((await server.call('contacts-list', {})).status).toBe(200);
  });

  it('announces a keep-alive timeout shorter than the one it applies', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = await post(server, agent, 'contacts-list', '{}');
      const announced = Number(/timeout=(\d+)/.exec(String(answer.headers['keep-alive']))?.[1]) * 1000;
      expect(announced).toBeGreaterThan(0);
      // A client that closes its idle connections when announced never reuses one the server is closing.
      expect(KEEP_ALIVE_MS - announced).toBeGreaterThanOrEqual(5000);
    } finally {
      agent.destroy();
    }
  });

  it('concurrent merges and deletes over keep-alive connections all get an answer, also after idling past 6 s', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const failures: string[] = [];
    let sent = 0;
    let reusedAfterIdle = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => post(server, agent, 'contacts-create', JSON.stringify({ first_name: `R${round}-${i}` })).then((a) => (a.body.result as { id: string }).id)));
        // Pairs merged, the secondary deleted meanwhile, the primary deleted and merged again: every order of a race.
        const calls: [string, Json][] = [];
        for (let i = 0; i + 1 < ids.length; i += 2) {
          const [p, s] = [ids[i]!, ids[i + 1]!];
          calls.push(['contacts-merge', { primary_id: p, secondary_id: s }], ['contacts-delete', { id: s }], ['contacts-merge', { primary_id: s, secondary_id: p }], ['contacts-delete', { id: p }], ['contacts-get', { id: p }]);
        }
        const answers = await Promise.allSettled(calls.map(([op, body]) => post(server, agent, op, JSON.stringify(body))));
        sent += answers.length;
        for (const [i, a] of answers.entries()) {
          if (a.status === 'rejected') failures.push(`${calls[i]![0]}: ${String(a.reason)}`);
          else if (a.value.status >= 500) failures.push(`${calls[i]![0]}: ${a.value.status} ${JSON.stringify(a.value.body)}`);
          else expect([200, 404, 409], `${calls[i]![0]} ${JSON.stringify(a.value.body)}`).toContain(a.value.status);
        }
        if (round < 2) {
          // Idle past Node's default keep-alive timeout (5 s announced, 6 s applied): the connections stay usable.
          await new Promise((r) => setTimeout(r, 6_500));
          const after = await post(server, agent, 'contacts-list', '{"limit":1}');
          expect(after.status).toBe(200);
          if (after.reused) reusedAfterIdle++;
        }
      }
    } finally {
      agent.destroy();
    }
    expect(failures).toEqual([]);
    expect(sent).toBe(3 * 30);
    expect(reusedAfterIdle).toBe(2);
  }, 120_000);
});
