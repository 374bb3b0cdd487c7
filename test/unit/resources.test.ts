/**
 * Issue 18, item 1: every family is one resource definition, and an operation is one entry in
 * it, a one-line handler and a test. These checks fail when a piece is missing: the handler
 * file, its use of the declaration (the name typed once), its documentation, or a test that
 * calls it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { ApiError } from '../../shared/errors.js';
import { generatedServerFiles } from '../../scripts/client-files.js';
import { EVENT_NAMES, type EventName } from '../../shared/schemas/entities/event-names.js';
import { ENTITIES, ENTITY_EVENTS } from '../../shared/schemas/entities/index.js';
import { apiShape, defineResource, operationName, parseOperation } from '../../shared/schemas/resource.js';
import { RESOURCES, webhooksResource } from '../../shared/schemas/resources/index.js';
import { ACCOUNT_KEYS, type KeyDeclarations, RECORD_INDEX_NAMES, TABLE_KEYS } from '../../shared/schemas/keys/index.js';
import { indexName, keys } from '../../shared/db/table.js';
import { readRepoFile, repoRoot, tsFilesUnder } from '../helpers/source-files.js';

const entityPrefixes = new Set<string>(ENTITIES.map((e) => e.family));

describe('resource definitions', () => {
  it('give every registry entry, and nothing else: one per operation of every family', () => {
    const declared = RESOURCES.flatMap((r) => Object.keys(r.operations).map((verb) => operationName(r, verb)));
    expect(operations.map((o) => o.name)).toEqual(declared);
    expect(new Set(declared).size).toBe(declared.length);
  });

  it('document every operation: a summary, a body schema and a result schema', () => {
    for (const r of RESOURCES) {
      for (const [verb, op] of Object.entries(r.operations)) {
        expect(op.summary.length, `${r.prefix}-${verb}`).toBeGreaterThan(5);
        expect(op.input.kind, `${r.prefix}-${verb} input`).toBe('schema');
        expect(op.result.kind, `${r.prefix}-${verb} result`).toBe('schema');
      }
    }
  });

  it('have a handler file per operation that names its operation once, through the declaration', () => {
    for (const entry of operations) {
      const file = `functions/${entry.entry}`;
      expect(existsSync(join(repoRoot, file)), `${file} is missing`).toBe(true);
      const source = readRepoFile(file);
      expect(source, file).toMatch(/export const handler = /);
      // The name is derived, never typed: a record family's handlers come from crud/batch/trash
      // builders over its entity, the others from `handle(<resource>, '<verb>', …)`.
      expect(source, file).not.toContain(`'${entry.name}'`);
      const verb = entry.entry.slice(entry.entry.indexOf('/') + 1, -'.ts'.length);
      const prefix = entry.entry.slice(0, entry.entry.indexOf('/'));
      if (!entityPrefixes.has(prefix)) expect(source, file).toMatch(new RegExp(`handle\\(\\w+Resource, '${verb}', `));
    }
  });

  it('have every operation called by at least one test', () => {
    const tests = tsFilesUnder('test')
      .filter((f) => !f.endsWith('resources.test.ts'))
      .map(readRepoFile)
      .join('\n');
    // A family's generic test may build the name (`${family}-batch-get`): then the verb is enough.
    const missing = operations.filter((o) => !tests.includes(`'${o.name}'`) && !tests.includes(`-${o.entry.slice(o.entry.indexOf('/') + 1, -3)}\``));
    expect(missing.map((o) => o.name)).toEqual([]);
  });
});

describe('keys: declared by the families, derived by the data layer', () => {
  // Every owner of key declarations: the families' definitions, and the account's own keys.
  const owners: KeyDeclarations[] = [...new Set([...RESOURCES.map((r) => r.keys), ACCOUNT_KEYS])];

  it('every family declares its keys, and the table has a builder for each declaration and nothing else', () => {
    for (const r of RESOURCES) expect(Object.keys(r.keys).length, r.family).toBeGreaterThan(0);
    const declared = owners.flatMap((o) => Object.keys(o));
    expect(new Set(declared).size, 'a key name declared by two families').toBe(declared.length);
    expect(Object.keys(keys).sort()).toEqual([...declared].sort());
    expect(Object.keys(TABLE_KEYS).sort()).toEqual([...declared].sort());
  });

  it('builds each key from its declaration: placeholders in order, numbers zero-padded', () => {
    expect(keys.webhookEndpoint('acc', 'id-1')).toEqual({ pk: 'A#acc#wh', sk: 'id-1' });
    expect(keys.importGsi('acc', '2026-01-01T00:00:00.000Z', 'j')).toEqual({ gsi1pk: 'A#acc#imp', gsi1sk: '2026-01-01T00:00:00.000Z#j' });
    expect(keys.importError('acc', 'j', 42)).toEqual({ pk: 'A#acc#imp#j', sk: 'E#000000042' });
    expect(keys.cascadeLog('acc', 'company', 'c1', 'contact', 'k1', 'company_id')).toEqual({ pk: 'A#acc#company#c1', sk: 'C#contact#k1#company_id' });
    expect(keys.activeImportsPartition).toBe('IMPORTS#ACTIVE');
    expect(indexName.ref('company', 'c1')).toBe('c#c1');
    expect(Object.keys(indexName)).toEqual(expect.arrayContaining(Object.keys(RECORD_INDEX_NAMES)));
  });

  it('scopes every account key to its account: it starts with A#<account>, except the listed installation-wide ones', () => {
    const notUnderTheAccount = ['idempotency', 'activeImport', 'activeExport', 'activeErasure', 'activeIndexBuild'];
    for (const [name, builder] of Object.entries(keys)) {
      if (typeof builder !== 'function') continue;
      const args = Array.from({ length: 8 }, (_, i) => (i === 0 ? 'ACC' : `p${i}`));
      const built = (builder as (...a: unknown[]) => unknown)(...args);
      const first = typeof built === 'string' ? built : Object.values(built as object)[0];
      const declaration = JSON.stringify(TABLE_KEYS[name as keyof typeof TABLE_KEYS]);
      if (!declaration.includes('{account}') || notUnderTheAccount.includes(name)) continue;
      expect(first, name).toMatch(/^A#ACC(#|$)/);
    }
  });
});

describe('parseOperation: the contract order from the declaration', () => {
  const resource = defineResource({
    family: 'webhooks',
    prefix: 'things',
    keys: {},
    components: {},
    operations: {
      rename: {
        access: 'write',
        summary: 'Rename a thing',
        input: v.strictObject({ id: v.string(), name: v.optional(v.pipe(v.string(), v.maxLength(5, 'must be at most 5 characters'))) }),
        result: v.object({}),
        body: {
          readOnly: ['created_at'],
          ids: ['id'],
          required: [{ field: 'name', code: 'webhooks.name_required', mode: 'update' }],
          checks: [(body) => {
            if (body.name === 'taken') throw new ApiError('webhooks.conflict', 'name is taken');
          }],
        },
      },
    },
  });
  const codeOf = (body: Record<string, unknown>) => {
    try {
      parseOperation('webhooks', resource.operations.rename, body);
      return 'ok';
    } catch (e) {
      return `${(e as ApiError).code}: ${(e as ApiError).details?.map((d) => `${d.path} ${d.message}`).join(', ') ?? ''}`;
    }
  };
  const ID = '4F1C1B4E-8A8E-4C55-9A43-3B0F5D6A7E21';

  it('rejects unknown and read-only fields first, then ids, then required names, then checks, then the schema', () => {
    expect(codeOf({ id: 'x', name: null, created_at: 1, color: 2 })).toBe('webhooks.invalid_request: created_at field is read-only, color unknown field');
    expect(codeOf({ id: 'x', name: null })).toBe('webhooks.invalid_id: id must be a UUID');
    expect(codeOf({ name: 'a' })).toBe('webhooks.invalid_request: id is required');
    expect(codeOf({ id: ID, name: ' ' })).toBe('webhooks.name_required: name is required');
    expect(codeOf({ id: ID, name: 'taken' })).toBe('webhooks.conflict: ');
    expect(codeOf({ id: ID, name: 'toolong' })).toBe('webhooks.invalid_request: name must be at most 5 characters');
  });

  it('returns the schema output with ids lowercased', () => {
    expect(parseOperation('webhooks', resource.operations.rename, { id: ID, name: 'ok' })).toEqual({ id: ID.toLowerCase(), name: 'ok' });
  });

  it('parses an endpoint time window alike for webhooks-recover and -replay (order, normalised instants, until after since)', () => {
    for (const op of [webhooksResource.operations.recover, webhooksResource.operations.replay]) {
      const parse = (body: Record<string, unknown>) => parseOperation('webhooks', op, body);
      expect(() => parse({ endpoint_id: 'x', colour: 1 })).toThrow('fields that cannot be');
      expect(() => parse({ endpoint_id: 'x' })).toThrow('endpoint_id is not a valid UUID');
      expect(() => parse({ endpoint_id: ID })).toThrow('since is required');
      expect(() => parse({ endpoint_id: ID, since: 'yesterday' })).toThrow(ApiError);
      expect(() => parse({ endpoint_id: ID, since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' })).toThrow('until must be after since');
      expect(parse({ endpoint_id: ID, since: '2026-01-01T01:00:00+01:00' })).toEqual({ endpoint_id: ID.toLowerCase(), since: '2026-01-01T00:00:00.000Z' });
    }
  });

  it('uses the operation’s own parse when it has one', () => {
    expect(() => parseOperation('webhooks', webhooksResource.operations.recover, { endpoint_id: ID })).toThrow('since is required');
  });
});

describe('apiShape', () => {
  it('keeps the record schema’s fields in its order and drops everything else', () => {
    const toApi = apiShape(v.object({ id: v.string(), name: v.string(), note: v.nullable(v.string()) }));
    expect(Object.entries(toApi({ pk: 'A#1', name: 'n', id: '1', secret: 's', note: 'x' }))).toEqual([
      ['id', '1'],
      ['name', 'n'],
      ['note', 'x'],
    ]);
  });

  it('fills a field an older item lacks when asked', () => {
    expect(apiShape(v.object({ id: v.string(), note: v.nullable(v.string()) }), null)({ id: '1' })).toEqual({ id: '1', note: null });
  });
});

describe('the written-out event names (shared/schemas/entities/event-names.ts)', () => {
  it('are the entity definitions\' event names, in their order (else: npm run client:generate)', () => {
    expect(EVENT_NAMES).toEqual(ENTITY_EVENTS);
    // The written list is exact; the derived type is the wider `<type>.<change>` product.
    expectTypeOf<EventName>().toExtend<(typeof ENTITY_EVENTS)[number]>();
  });
});

describe('the written-out server files (npm run client:generate)', () => {
  it('match the declarations they are written from', () => {
    for (const [path, text] of Object.entries(generatedServerFiles())) expect(readRepoFile(path), `${path} is stale: run npm run client:generate`).toBe(text);
  });
});
