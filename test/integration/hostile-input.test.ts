/**
 * Hostile input (contract §1, §3, §4), generated from the registry: every operation, new ones
 * included, answers hostile bodies with the contract's error envelope and a 4xx, never a 500 —
 * wrong types for each documented field, huge and unicode strings, deep nesting, `__proto__` keys
 * at the top and inside every object field, tampered and foreign cursors, 101-item arrays,
 * non-object and broken JSON. And for every record family, 20 concurrent updates of different
 * fields all succeed and all survive.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { cursorKey, encodeCursor } from '../../shared/db/cursor.js';
import { statusForCode } from '../../shared/errors.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';
import { ENTITIES } from '../../shared/schemas/entities/index.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { responseValidator } from '../helpers/openapi-validator.js';

type Json = Record<string, unknown>;
type Schema = Json & { type?: string | string[]; properties?: Record<string, Schema>; anyOf?: Schema[]; oneOf?: Schema[]; items?: Schema; enum?: unknown[]; $ref?: string };

const doc = buildOpenApiDocument(operations);
const check = responseValidator(doc);
const components = doc.components.schemas as Record<string, Schema>;
const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? resolve(components[s.$ref.split('/').pop()!]) : s);

/** The documented request body of an operation (an empty object schema when it has none). */
function requestSchema(op: string): Schema {
  const post = (doc.paths[`/api/${op}`] as { post: { requestBody?: { content: Record<string, { schema: Schema }> } } }).post;
  return resolve(post.requestBody?.content['application/json']?.schema) ?? { type: 'object', properties: {} };
}

/** JSON types a schema accepts; undefined when it accepts anything. */
function allowedTypes(s: Schema): Set<string> | undefined {
  const r = resolve(s)!;
  const union = r.anyOf ?? r.oneOf;
  if (union) {
    const parts = union.map(allowedTypes);
    return parts.some((p) => !p) ? undefined : new Set(parts.flatMap((p) => [...p!]));
  }
  if (r.enum) return new Set(r.enum.map((v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)));
  if ('const' in r) return new Set([r.const === null ? 'null' : typeof r.const]);
  if (r.type === undefined) return undefined;
  const types = new Set(Array.isArray(r.type) ? r.type : [r.type]);
  if (types.has('integer')) types.add('number');
  return types;
}

/** An object whose own (enumerable, serialized) key is `__proto__`, as JSON.parse makes it. */
const protoObject = (value: unknown, rest: Json = {}): Json => JSON.parse(`{"__proto__":${JSON.stringify(value)},${JSON.stringify(rest).slice(1)}`.replace(/,}$/, '}'));
const deep = (depth: number): unknown => (depth === 0 ? { leaf: '𝔘' } : { n: [deep(depth - 1)] });
const unicode = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map((s) => `${s}\u202e\u0000💥`);
/** About 300 KB of UTF-8: over the 256 KiB body limit. */
const huge = 'ü🦄'.repeat(60_000);

/** Values that the schema cannot accept (none when it accepts anything). */
function hostileValues(s: Schema): fc.Arbitrary<unknown>[] {
  const r = resolve(s)!;
  const types = allowedTypes(r);
  if (!types) return [];
  const out: fc.Arbitrary<unknown>[] = [];
  if (!types.has('string')) out.push(unicode, fc.constant(huge));
  if (!types.has('number')) out.push(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })));
  if (types.has('integer') && !types.has('number')) out.push(fc.constantFrom(1.5, 2 ** 60));
  if (!types.has('boolean')) out.push(fc.boolean());
  if (!types.has('array')) out.push(fc.array(unicode, { maxLength: 3 }), fc.constant(Array.from({ length: 101 }, () => [deep(3)])));
  if (!types.has('object')) out.push(fc.constant(deep(60)), fc.constant(protoObject({ admin: true })));
  if (types.has('string')) {
    const variants = [...(r.anyOf ?? r.oneOf ?? [r])].map((v) => resolve(v)!).filter((v) => v.type === 'string' || v.enum);
    for (const v of variants) {
      if (typeof v.maxLength === 'number') out.push(fc.constant('ü'.repeat(v.maxLength + 1)));
      if (v.enum || v.format === 'uuid' || v.format === 'uri' || v.format === 'email') out.push(unicode.map((u) => `zz${u}`));
    }
  }
  if (types.has('array')) {
    const arr = [...(r.anyOf ?? r.oneOf ?? [r])].map((v) => resolve(v)!).find((v) => v.type === 'array');
    if (arr && typeof arr.maxItems === 'number' && arr.maxItems <= 100) out.push(fc.constant(Array.from({ length: 101 }, (_, i) => `${randomUUID().slice(0, 30)}${i}`)));
    const items = arr?.items ? allowedTypes(arr.items) : undefined;
    if (items && !items.has('object')) out.push(fc.constant([protoObject('x'), deep(40), null]));
  }
  if (types.has('object')) out.push(fc.constant(protoObject('x', { constructor: { prototype: { polluted: true } } })), fc.constant(protoObject(deep(40))));
  return out;
}

/** A body (raw JSON text) that no operation can accept. */
function hostileBody(op: string, cursors: { foreign: string; tampered: string }): fc.Arbitrary<string> {
  const schema = requestSchema(op);
  const props = Object.entries(schema.properties ?? {});
  const fieldCases = props.flatMap(([name, s]) => hostileValues(s).map((a) => a.map((v) => ({ [name]: v }))));
  const withCursor = props.some(([name]) => name === 'cursor') ? [fc.constantFrom({ cursor: cursors.foreign }, { cursor: cursors.tampered })] : [];
  const objectBodies = fc.oneof(...fieldCases, ...withCursor, fc.constant({} as Json)).chain((body) =>
    fc.constantFrom(
      // The hostile field alone, or beside a top-level __proto__ key (unknown field), or several hostile fields.
      JSON.stringify(body),
      JSON.stringify(protoObject({ isAdmin: true }, body)),
    ),
  );
  const notObjects = fc.constantFrom('[]', '"contacts"', '42', 'null', 'true', '{"a":', '{"a":1}}', '\u0000', '['.repeat(50_000) + ']'.repeat(50_000), `{"x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
  return fc.oneof({ weight: 6, arbitrary: objectBodies }, { weight: 1, arbitrary: notObjects }).filter((b) => b !== '{}');
}

/** The contract's error envelope, its documented schema and status, a 4xx, and a human message. */
function expectClientError(op: string, family: string, body: string, reply: { status: number; body: Json }) {
  const context = `${op} ${body.slice(0, 200)} → ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
  // A batch (contract §13) answers bad items inside its 200 result: each one a failure with a code.
  const results = (reply.body as { result?: { results?: { ok: boolean; error?: { code: string } }[] } }).result?.results;
  if (op.includes('-batch-') && reply.status === 200 && Array.isArray(results)) {
    for (const r of results) if (!r.ok) expect(r.error?.code, context).toMatch(/^[a-z_]+\.[a-z_]+$/);
    return;
  }
  expect(reply.status, context).toBeGreaterThanOrEqual(400);
  expect(reply.status, context).toBeLessThan(500);
  const error = (reply.body as { ok: boolean; error?: { code: string; message: string } }).error;
  expect(reply.body.ok, context).toBe(false);
  expect(error?.code, context).toMatch(/^[a-z_]+\.[a-z_]+$/);
  expect([family, 'api', 'auth'], context).toContain(error!.code.split('.')[0]);
  expect(statusForCode(error!.code), context).toBe(reply.status);
  expect(error!.message, context).not.toMatch(/\n\s+at |node_modules|Exception|undefined/);
  expect(check(op, reply.status, reply.body), context).toEqual([]);
}

describe('hostile bodies for every operation of the registry', () => {
  const auth = newAccount();
  let cursors: { foreign: string; tampered: string };

  beforeAll(async () => {
    const key = await cursorKey();
    const foreign = encodeCursor('2026-01-01T00:00:00.000Z#00000000-0000-4000-8000-000000000000', { accountId: randomUUID(), operation: 'contacts-list', filters: {} }, key);
    const own = encodeCursor('2026-01-01T00:00:00.000Z#00000000-0000-4000-8000-000000000000', { accountId: auth.accountId, operation: 'contacts-list', filters: {} }, key);
    const i = Math.floor(own.length / 2);
    cursors = { foreign, tampered: `${own.slice(0, i)}${own[i] === 'A' ? 'B' : 'A'}${own.slice(i + 1)}` };
  });

  it(`answers every hostile body with a 4xx envelope (${operations.length} operations)`, async () => {
    let sent = 0;
    const codes = new Map<string, number>();
    // Four operations at a time: most bodies are refused before any DynamoDB call, so the
    // answers of one operation overlap another's reads instead of waiting in turn.
    const queue = [...operations];
    const runNext = async (): Promise<void> => {
      const entry = queue.shift();
      if (!entry) return;
      await fc.assert(
        fc.asyncProperty(hostileBody(entry.name, cursors), async (body) => {
          const reply = await invoke(entry.name, body, auth);
          sent++;
          expectClientError(entry.name, entry.family, body, reply as never);
          const code = String(reply.body.error?.code).replace(/^[a-z_]+\./, '*.');
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }),
        { numRuns: 30, seed: 24 },
      );
      await runNext();
    };
    await Promise.all(Array.from({ length: 4 }, runNext));
    expect(sent).toBeGreaterThanOrEqual(operations.length * 30);
    // The bodies reach every kind of refusal, not one early check.
    for (const code of ['*.invalid_request', '*.payload_too_large', '*.invalid_cursor', '*.invalid_id']) expect([...codes.keys()]).toContain(code);
    console.info(`hostile bodies: ${sent}, codes: ${JSON.stringify(Object.fromEntries(codes))}`);
  }, 120_000);

  it('every list operation refuses tampered and foreign cursors with <family>.invalid_cursor', async () => {
    const lists = operations.filter((o) => Object.keys(requestSchema(o.name).properties ?? {}).includes('cursor'));
    expect(lists.length).toBeGreaterThan(5);
    for (const entry of lists) {
      const required = (requestSchema(entry.name).required as string[] | undefined) ?? [];
      const base: Json = Object.fromEntries(required.map((r) => [r, randomUUID()]));
      for (const cursor of [cursors.foreign, cursors.tampered]) {
        const body = JSON.stringify({ ...base, cursor });
        const reply = await invoke(entry.name, body, auth);
        expectClientError(entry.name, entry.family, body, reply as never);
        if (required.length === 0) expect(reply.body.error?.code, entry.name).toBe(`${entry.family}.invalid_cursor`);
      }
    }
  });
});

describe('20 concurrent updates of different fields, for every record family', () => {
  const auth = newAccount();
  const examples = (s: Schema): unknown => (resolve(s)!.examples as unknown[] | undefined)?.[0];

  /** A create body of required fields (examples), references left out. */
  const createBody = (type: string): Json => {
    const schema = components[`${type[0]!.toUpperCase()}${type.slice(1)}CreateInput`]!;
    return Object.fromEntries(((schema.required as string[] | undefined) ?? []).map((f) => [f, examples(schema.properties![f]!)]));
  };

  it.each(ENTITIES.map((e) => [e.family, e.type] as const))('%s', async (family, type) => {
    const create = `${family.replace(/_/g, '-')}-create`;
    const update = `${family.replace(/_/g, '-')}-update`;
    const get = `${family.replace(/_/g, '-')}-get`;
    const updateSchema = components[`${type[0]!.toUpperCase()}${type.slice(1)}UpdateInput`]!;
    const props = updateSchema.properties!;
    // Plain fields with a documented example (references need other records: left out).
    const scratch = await ok<Json & { id: string }>(create, createBody(type), auth);
    const candidates: Json[] = [];
    for (const [name, s] of Object.entries(props)) {
      if (name === 'id' || name === 'custom_fields' || /_ids?$/.test(name)) continue;
      const value = examples(s);
      if (value === undefined) continue;
      // Only fields the example is valid for on its own (cross-field rules may refuse some).
      if ((await invoke(update, { id: scratch.id, [name]: value }, auth)).status === 200) candidates.push({ [name]: value });
    }
    // Custom fields are different fields too: they fill the twenty.
    if ('custom_fields' in props) {
      for (let i = 0; candidates.length < 20; i++) {
        const def = await ok<{ id: string }>('custom-fields-create', { entity_type: type, name: `F${i}`, field_type: 'text' }, auth);
        candidates.push({ custom_fields: { [def.id]: `value ${i}` } });
      }
    }
    expect(candidates.length, `${family} has fields to update`).toBeGreaterThan(0);
    const updates = Array.from({ length: 20 }, (_, i) => candidates[i % candidates.length]!);
    for (let round = 0; round < 2; round++) {
      const record = await ok<Json & { id: string }>(create, createBody(type), auth);
      const replies = await Promise.all(updates.map((u) => invoke<Json>(update, { id: record.id, ...u }, auth)));
      expect(replies.map((r) => r.status), JSON.stringify(replies.find((r) => r.status !== 200)?.body)).toEqual(updates.map(() => 200));
      const got = await ok<Json>(get, { id: record.id }, auth);
      for (const [i, u] of updates.entries()) {
        const [name, value] = Object.entries(u)[0]!;
        if (name === 'custom_fields') expect((got.custom_fields as Json)[Object.keys(value as Json)[0]!], `${family} custom field`).toEqual(Object.values(value as Json)[0]);
        else expect(got[name], `${family}.${name}`).toEqual((replies[i]!.body.result as Json)[name]);
      }
    }
  }, 120_000);
});
