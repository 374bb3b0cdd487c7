/**
 * The single DynamoDB table, declared once. The CDK stack, the local runner and the tests
 * all build the table from TABLE_DEFINITION, and every key in the code base comes from the
 * key builders below, derived from the families' key declarations (shared/schemas/keys/; see
 * docs/data-model.md for the access patterns).
 */
import type { EntityType } from '../schemas/entities/index.js';
import {
  ACCOUNT_META_ATTRIBUTES,
  type KeyBuilder,
  type KeyBuilders,
  type KeyDeclaration,
  type KeyDeclarations,
  RECORD_INDEX_NAMES,
  REFERENCE_TAGS,
  type ReferenceTarget,
  TABLE_KEYS,
} from '../schemas/keys/index.js';
import { SUMMARY_KEYS } from '../schemas/keys/summaries.js';

export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** GSI on account + entity type + created_at: the newest-first listing of every entity. */
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  /**
   * Sparse GSI on account + entity type + pipeline stage (`stageField`), on the record items
   * themselves (projection ALL): a stage's records newest first, read as records in one Query
   * (pipelines-board's columns, projects-list's `stage_id eq`). Only records with a stage have its keys.
   */
  gsi2: { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', stageField: 'stage_id' },
  stream: 'NEW_AND_OLD_IMAGES',
  /**
   * The entity type of a record item (`contact`, `activity`, …). Not `type`: that is an API field
   * of some entities (an activity's type).
   */
  entityTypeAttribute: 'entity',
  /** Epoch-seconds attribute that expires items (idempotency records). */
  ttlAttribute: 'ttl',
} as const;

export const DEFAULT_TABLE_NAME = 'crm';

/** The key schema of a table or index (string keys) and the attribute definitions of its keys. */
export const keySchemaOf = (partitionKey: string, sortKey: string) => ({
  AttributeDefinitions: [partitionKey, sortKey].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
  KeySchema: [
    { AttributeName: partitionKey, KeyType: 'HASH' as const },
    { AttributeName: sortKey, KeyType: 'RANGE' as const },
  ],
});

/** Parameters for CreateTable, used by the local runner and the tests (the stack maps the same fields). */
export function createTableInput(tableName: string) {
  const d = TABLE_DEFINITION;
  const table = keySchemaOf(d.partitionKey, d.sortKey);
  const indexes = [d.gsi1, d.gsi2].map((g) => ({ name: g.name, ...keySchemaOf(g.partitionKey, g.sortKey) }));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...table.AttributeDefinitions, ...indexes.flatMap((g) => g.AttributeDefinitions)],
    KeySchema: table.KeySchema,
    GlobalSecondaryIndexes: indexes.map((g) => ({
      IndexName: g.name,
      KeySchema: g.KeySchema,
      Projection: { ProjectionType: 'ALL' as const },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: d.stream },
  };
}

/** Entity types stored as records (one item each, sk = RECORD_SK): the entity list's types. */
export type { EntityType, ReferenceTarget };

/**
 * Attribute of a record item written by a restore (contract §15): the version the record had when
 * it was deleted. Its insert is a `restored` change, not a `created` one.
 */
export const RESTORED_ATTR = 'rst';

// ---- key builders, derived from the declarations -------------------------------------------

/** A template, compiled: literal parts and placeholders (argument index, zero-padding width). */
type Part = string | { arg: number; pad: number };
const PLACEHOLDER = /\{([^}:]+)(?::(\d+))?\}/g;

function compile(template: string, names: string[]): Part[] {
  const parts: Part[] = [];
  let at = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push(template.slice(at, m.index));
    const name = m[1]!;
    if (!names.includes(name)) names.push(name);
    parts.push({ arg: names.indexOf(name), pad: m[2] === undefined ? 0 : Number(m[2]) });
    at = m.index + m[0].length;
  }
  if (at < template.length) parts.push(template.slice(at));
  return parts;
}

function render(parts: readonly Part[], args: readonly unknown[]): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') out += p;
    else if (p.pad === 0) out += String(args[p.arg]);
    else out += String(args[p.arg]).padStart(p.pad, '0');
  }
  return out;
}

/** The builder of one declaration (see shared/schemas/keys/define.ts for the forms). */
export function deriveKey<D extends KeyDeclaration>(declaration: D): KeyBuilder<D> {
  const names: string[] = [];
  const pair = (pkAttribute: string, skAttribute: string, [pk, sk]: readonly string[]) => {
    const [p, q] = [compile(pk!, names), compile(sk!, names)];
    return (args: readonly unknown[]) => ({ [pkAttribute]: render(p, args), [skAttribute]: render(q, args) });
  };
  const d: KeyDeclaration = declaration;
  let builder: (args: readonly unknown[]) => unknown;
  if (typeof d === 'string') {
    const parts = compile(d, names);
    builder = (args) => render(parts, args);
  } else if ('gsi1' in d) {
    builder = pair(TABLE_DEFINITION.gsi1.partitionKey, TABLE_DEFINITION.gsi1.sortKey, d.gsi1);
  } else if ('gsi2' in d) {
    builder = pair(TABLE_DEFINITION.gsi2.partitionKey, TABLE_DEFINITION.gsi2.sortKey, d.gsi2);
  } else {
    builder = pair(TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey, d);
  }
  return (names.length === 0 ? builder([]) : (...args: unknown[]) => builder(args)) as KeyBuilder<D>;
}

/** The builders of a family's declarations, by name. */
export function deriveKeys<K extends KeyDeclarations>(declarations: K): KeyBuilders<K> {
  return Object.fromEntries(Object.entries(declarations).map(([name, d]) => [name, deriveKey(d)])) as KeyBuilders<K>;
}

/** Every key of the table: records, the account, and each family (shared/schemas/keys/index.ts). */
export const keys = deriveKeys(TABLE_KEYS);

export const RECORD_SK = keys.recordSk;
/** Sort key of a merge item (keys.merge): its stream records are merges, not record changes. */
export const MERGE_SK = keys.mergeSk;
/** Sort value shared by the GSI and every index entry: newest-first order is its reverse. */
export const orderKey = keys.order;
/** Sort key of a change-log entry: its position, zero-padded so the sort key orders numerically. */
export const eventSk = keys.eventPosition;

const indexNames = deriveKeys(RECORD_INDEX_NAMES);
/**
 * Names of index partitions (the `name` of `keys.indexEntry`): one partition per indexed value,
 * holding one small entry per record, sorted like the GSI.
 */
export const indexName = {
  ...indexNames,
  /** Records that reference `id` of `target` (a contact's company, a project's contacts, a record's owner …). */
  ref: (target: ReferenceTarget, id: string) => indexNames.ref(REFERENCE_TAGS[target], id),
} as const;

const metaAttributes = deriveKeys(ACCOUNT_META_ATTRIBUTES);
/** What every override attribute starts with: the literal start of its template (`o#`). */
const OVERRIDE_PREFIX = ACCOUNT_META_ATTRIBUTES.override.split('{')[0]!;
const INDEXED_PREFIX = ACCOUNT_META_ATTRIBUTES.indexedField.split('{')[0]!;
/** Attribute names of the per-account META item (see shared/db/meta.ts). */
export const metaAttr = {
  ...metaAttributes,
  isOverride: (attr: string) => attr.startsWith(OVERRIDE_PREFIX),
  /** The custom-field id of an `indexedField` attribute, else undefined. */
  indexedFieldId: (attr: string) => (attr.startsWith(INDEXED_PREFIX) ? attr.slice(INDEXED_PREFIX.length) : undefined),
} as const;

/** The project summary counters' keys (control table; shared/schemas/keys/summaries.ts): apart, so that only their users carry them. */
export const summaryKeys = /* @__PURE__ */ deriveKeys(SUMMARY_KEYS);
