/**
 * The shape of an entity definition (one per resource family, in the spirit of ElectroDB's
 * model) and everything derived from it that is pure declaration: input schemas, the record
 * schema and type, defaults, read-only fields, list filters and event names. The data layer,
 * the domain, the registry, the OpenAPI document, the webhook pipeline and the stream fan-out
 * all read these definitions; nothing about a family is written twice.
 */
import * as v from 'valibot';
import type { SearchableText } from '../../search/tokenize.js';
import { cursorString, limitInteger, searchString } from '../primitives.js';
import type { FieldSpec } from '../fields.js';
import { filterSchemas } from '../filter.js';
import type { SCOPE_FAMILIES } from '../scope-names.js';

export type Fields = Record<string, FieldSpec<v.GenericSchema | undefined, v.GenericSchema>>;

/** A list filter of the `<prefix>-list` body. Filters on the same record field are OR-ed, different fields AND-ed. */
export type ListFilter =
  /** The record has all the given tags. */
  | { kind: 'tags'; field: string }
  /** One id: the record's reference field (or id array) holds it; `none`: `"none"` is also taken, for the records whose reference is null. */
  | { kind: 'ref'; field: string; none?: true }
  /** Several ids (at most `max`): the record's reference is any of them. */
  | { kind: 'refs'; field: string; max: number }
  /** Several values of an enumerated field: any of them. */
  | { kind: 'values'; field: string }
  /** A boolean field's value. */
  | { kind: 'bool'; field: string };

/** A cross-field rule's failure: `<family>.<code>` naming `path`. */
export interface Violation {
  code: string;
  path: string;
  message: string;
}

/** The families a scope names (contract §14): a record family is one of them. */
type ScopeFamily = (typeof SCOPE_FAMILIES)[number];

/**
 * An entity definition; `Fam` is its family's literal (`'contacts'`). Without it (code for any
 * family), `family` is a family a scope names, so a `Family` (shared/errors.ts) with no cast.
 */
export interface EntityDefinition<T extends string = string, Fam extends string = ScopeFamily, FS extends Fields = Fields, Req extends string = string> {
  /** Stored entity type, singular (`contact`): keys, events (`contact.created`). */
  type: T;
  /** Error family (`contacts`): codes `<family>.<name>`; also the operation prefix (`contacts-create`) and handler folder. */
  family: Fam;
  /** How messages name one record (`contact`, `lead source`). */
  label: string;
  /** What one record is, for the documentation. */
  description: string;
  /** Every field in API order, between `created_by` and `created_at`. */
  fields: FS;
  /** The field required on create (`<family>.<field>_required` when missing or blank). */
  required: Req;
  /** Fields a client sets on create only (read-only afterwards). */
  createOnly?: readonly string[];
  /** Words a record is found by (`search`); none: the family has no search. */
  search?: (record: Record<string, unknown>) => SearchableText;
  /** A search that is one complete email address looks the email up exactly (contacts). */
  exactEmailSearch?: boolean;
  /** A field kept in an exact, case-insensitive lookup index (contacts' email, companies' domain). */
  lookup?: { field: string; index: 'email' | 'domain' };
  /** Filters of the list operation besides search, cursor and limit. */
  filters: Record<string, ListFilter>;
  /**
   * Fields that keep sort-ordered index entries (contract §17: `sort` and range/`eq`/`in`/`prefix`
   * conditions on them are full pages at flat cost). `created_at` needs none: it is the list's
   * own order. An update moves the entries whose value changed beside its write
   * (shared/db/writes.ts), `updated_at`'s on every update.
   */
  sorted?: readonly string[];
  /** Raises `<type>.created/updated/deleted` webhook events. */
  events: boolean;
  /**
   * Deletion moves a record to the trash (contract §15): `<family>-restore` brings it back and
   * `<type>.restored` is raised.
   */
  trash?: boolean;
  /** Duplicates can be merged (contract §15): `<family>-merge`, `<type>.merged`. */
  merge?: boolean;
  /** A record of it is a person, erasable (contract §18): `erasures-create`, `<type>.erased` (data `{ id }`). */
  erase?: boolean;
  /**
   * Its records move through the stages of a pipeline (contract §19): `pipeline_id`, `stage_id`
   * and the stage's derived fields are placed by the domain (shared/domain/records/stages.ts).
   * The function says why a write that would place a record (a placing field sent) is refused
   * where that placement is not loaded (a bundle without it, a bulk write), undefined when it does
   * not place: in the family's own definition, so that the other families' bundles carry none of it.
   */
  pipeline?: (sent: Record<string, unknown>, current: Record<string, unknown> | undefined) => string | undefined;
  /** Cross-field rules over the record as it would be after the write; `sent` are the body's fields. */
  rules?: (next: Record<string, unknown>, sent: readonly string[]) => Violation[];
  /** Read-only fields derived on every write (`closed_at`, `completed_at`); `prev` is undefined on create. */
  derive?: (next: Record<string, unknown>, prev: Record<string, unknown> | undefined, now: string) => Record<string, unknown>;
  /** Descriptions for the documentation: one line per operation. */
  docs: { list: string; create?: string; update?: string; delete?: string };
}

/** Declares an entity (identity function that keeps the literal types, the lookup key's included: batch upserts are typed by it). */
export const defineEntity = <
  const T extends string,
  const Fam extends ScopeFamily,
  FS extends Fields,
  const Req extends keyof FS & string,
  const L extends { field: keyof FS & string; index: 'email' | 'domain' } | undefined = undefined,
>(
  def: EntityDefinition<T, Fam, FS, Req> & { createOnly?: readonly (keyof FS & string)[]; lookup?: L; sorted?: readonly ((keyof FS & string) | 'updated_at')[] },
): EntityDefinition<T, Fam, FS, Req> & { lookup?: L } => def;

// --- derived schemas --------------------------------------------------------------------------

const uuid = v.pipe(v.string(), v.uuid(), v.metadata({ description: 'Unique identifier (lowercase UUID)', examples: ['4f1c1b4e-8a8e-4c55-9a43-3b0f5d6a7e21'] }));
const timestamp = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-22T01:16:30.123Z'] }));

export const recordHead = {
  id: uuid,
  account_id: v.pipe(v.string(), v.uuid(), v.metadata({ description: 'Account the record belongs to', examples: ['00000000-0000-4000-8000-000000000001'] })),
  created_by: v.pipe(v.string(), v.uuid(), v.metadata({ description: 'User who created it', examples: ['00000000-0000-4000-8000-000000000002'] })),
};
export const recordTail = {
  created_at: timestamp('Creation timestamp (ISO 8601 UTC)'),
  updated_at: timestamp('Last update timestamp (ISO 8601 UTC)'),
};

type OutputEntries<FS extends Fields> = { [K in keyof FS]: FS[K]['output'] };
type InputEntries<FS extends Fields> = { [K in keyof FS as FS[K]['input'] extends v.GenericSchema ? K : never]: NonNullable<FS[K]['input']> };

export type RecordSchema<FS extends Fields> = v.ObjectSchema<typeof recordHead & OutputEntries<FS> & typeof recordTail, undefined>;

const cache = new WeakMap<object, Map<string, unknown>>();
/** The same schema object on every call (the OpenAPI document refers to them by identity). */
function memo<T>(def: object, key: string, build: () => T): T {
  let m = cache.get(def);
  if (!m) cache.set(def, (m = new Map()));
  if (!m.has(key)) m.set(key, build());
  return m.get(key) as T;
}

export function recordSchema<FS extends Fields>(def: EntityDefinition<string, string, FS>): RecordSchema<FS> {
  return memo(def, 'record', () =>
    v.object({
      ...recordHead,
      ...(Object.fromEntries(Object.entries(def.fields).map(([k, s]) => [k, s.output])) as OutputEntries<FS>),
      ...recordTail,
    }),
  );
}

/** Field names of the API record, in order. */
export const recordFields = (def: EntityDefinition): string[] => Object.keys(recordSchema(def).entries);

/** The writable fields' rules (create-only ones included). */
export function writableEntries<FS extends Fields>(def: EntityDefinition<string, string, FS>): InputEntries<FS> {
  return memo(def, 'writable', () => Object.fromEntries(Object.entries(def.fields).filter(([, s]) => s.input).map(([k, s]) => [k, s.input])) as InputEntries<FS>);
}

/** Fields a client may send on create / update. */
export function settable(def: EntityDefinition, mode: 'create' | 'update'): string[] {
  return Object.keys(writableEntries(def)).filter((k) => mode === 'create' || !def.createOnly?.includes(k));
}

/** Fields of the resource a client may not set (named as read-only in the error). */
export function readOnlyFields(def: EntityDefinition, mode: 'create' | 'update'): string[] {
  const writable = settable(def, mode);
  return recordFields(def).filter((k) => !writable.includes(k) && !(mode === 'update' && k === 'id'));
}

/** A new record's fields, every one at its empty value. */
export function emptyFields(def: EntityDefinition): Record<string, unknown> {
  return Object.fromEntries(Object.entries(def.fields).map(([k, s]) => [k, structuredClone(s.empty)]));
}

/** The create body as one schema (for the OpenAPI document and the client's types). */
export function createSchema<FS extends Fields>(def: EntityDefinition<string, string, FS>) {
  return memo(def, 'create', () => {
    const entries = writableEntries(def) as v.ObjectEntries;
    return v.strictObject(Object.fromEntries(Object.entries(entries).map(([k, s]) => [k, k === def.required ? s : v.optional(s)])));
  }) as v.StrictObjectSchema<{ [K in keyof InputEntries<FS>]: v.OptionalSchema<InputEntries<FS>[K], undefined> }, undefined>;
}

/** The update body as one schema: `id` plus any settable field. */
export function updateSchema<FS extends Fields>(def: EntityDefinition<string, string, FS>) {
  return memo(def, 'update', () => {
    const entries = writableEntries(def) as v.ObjectEntries;
    const fields = settable(def as EntityDefinition, 'update');
    return v.strictObject({
      id: v.pipe(v.string(), v.uuid('must be a UUID'), v.metadata({ description: `Id of the ${def.label} to update` })),
      ...Object.fromEntries(fields.map((k) => [k, v.optional(entries[k]!)])),
    });
  }) as v.StrictObjectSchema<{ id: v.GenericSchema<string> } & { [K in keyof InputEntries<FS>]: v.OptionalSchema<InputEntries<FS>[K], undefined> }, undefined>;
}

/** The value of a `ref` list filter with `none` that asks for the records whose reference is null (`owner_id: "none"`). */
export const NO_REF = 'none';

const uuidIn = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase());
const filterTags = v.pipe(
  v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'tags must not be blank'), v.maxLength(64, 'tags must be at most 64 characters'))),
  v.maxLength(10, 'at most 10 tags'),
  v.metadata({ description: 'Only records that have all these tags (case-sensitive), at most 10', examples: [['vip']] }),
);

/** The list body: the definition's filters, `search` when it has words, `cursor` and `limit`. */
export function listSchema(def: EntityDefinition) {
  return memo(def, 'list', () => {
    const entries: v.ObjectEntries = {};
    if (def.search) {
      entries.search = v.optional(
        v.pipe(searchString, v.metadata({ description: 'Case- and accent-insensitive word-prefix search (1–200 characters; blank is no filter)', examples: ['ada'] })),
      );
    }
    for (const [name, filter] of Object.entries(def.filters)) {
      const spec = def.fields[filter.field];
      switch (filter.kind) {
        case 'tags':
          entries[name] = v.optional(filterTags);
          break;
        case 'ref':
          entries[name] = v.optional(
            filter.none
              ? v.pipe(v.union([v.literal(NO_REF), uuidIn], `must be a UUID or "${NO_REF}"`), v.metadata({ description: `Only records linked to this ${spec?.ref?.target ?? 'record'}, or "${NO_REF}": only records linked to none`, examples: [NO_REF] }))
              : v.pipe(uuidIn, v.metadata({ description: `Only records linked to this ${spec?.ref?.target ?? 'record'}` })),
          );
          break;
        case 'refs':
          entries[name] = v.optional(
            v.pipe(v.array(uuidIn), v.maxLength(filter.max, `at most ${filter.max} ids`), v.metadata({ description: `Only records linked to any of these (at most ${filter.max})` })),
          );
          break;
        case 'values': {
          const values = (spec?.values ?? []) as [string, ...string[]];
          entries[name] = v.optional(v.pipe(v.array(v.picklist(values, `must be one of ${values.join(', ')}`)), v.metadata({ description: `Any of these values of \`${filter.field}\`` })));
          break;
        }
        case 'bool':
          entries[name] = v.optional(v.pipe(v.boolean(), v.metadata({ description: `Only records whose \`${filter.field}\` is this value` })));
          break;
      }
    }
    // By reference to the components, with the field's own description beside the `$ref`.
    entries.filter = v.optional(v.pipe(v.lazy(() => filterSchemas().filter), v.metadata({ description: 'Conditions on any field (contract §17): a condition or an and/or/not group; combines with the other filters by AND' })));
    entries.sort = v.optional(v.pipe(v.lazy(() => filterSchemas().sort), v.metadata({ description: 'Order of the list (contract §17); default created_at desc' })));
    entries.cursor = v.optional(v.pipe(cursorString, v.metadata({ description: 'The `next_cursor` of the previous page (opaque)' })));
    entries.limit = v.optional(v.pipe(limitInteger, v.metadata({ description: 'Items per page, 1–100 (default 25)', examples: [25] })));
    return v.strictObject(entries);
  });
}

/**
 * The list body as parsed: `filter` and `sort` pass as they come, for the domain to check against
 * the account's custom fields (`<family>.invalid_filter` with paths, `<family>.invalid_sort`).
 */
export function listParseSchema(def: EntityDefinition) {
  return memo(def, 'list-parse', () => v.strictObject({ ...(listSchema(def).entries as v.ObjectEntries), filter: v.optional(v.unknown()), sort: v.optional(v.unknown()) }));
}

/** One page of records. */
export function pageSchema(def: EntityDefinition) {
  return memo(def, 'page', () =>
    v.object({
      items: v.array(recordSchema(def)),
      next_cursor: v.pipe(v.string(), v.metadata({ description: 'Pass as `cursor` for the next page; "" on the last page' })),
    }),
  );
}

/** Reference fields of a definition, with their error codes. */
export function refFields(def: EntityDefinition) {
  return Object.entries(def.fields)
    .filter(([, s]) => s.ref)
    .map(([field, s]) => ({ field, ...s.ref!, code: `${def.family}.invalid_${field}` }));
}

/** The field that holds custom field values, if the family has them. */
export const customField = (def: EntityDefinition): string | undefined => Object.entries(def.fields).find(([, s]) => s.custom)?.[0];

/** The tags field, if any. */
export const tagsField = (def: EntityDefinition): string | undefined => Object.entries(def.fields).find(([, s]) => s.tags)?.[0];

export const CHANGES = ['created', 'updated', 'deleted'] as const;
export type Change = (typeof CHANGES)[number];

// --- trash, restore and merge (contract §15) ---
/** Changes beyond CRUD: a restore from the trash, a merge of duplicates. */
export const EXTRA_CHANGES = ['restored', 'merged', 'erased', 'stage_changed'] as const;
export type AnyChange = Change | (typeof EXTRA_CHANGES)[number];
/** The changes a definition raises events for: CRUD, `restored` when it has a trash, `merged` when it merges, `erased` when it is a person (§18). */
export const changesOf = (def: Pick<EntityDefinition, 'trash' | 'merge' | 'erase' | 'pipeline'>): AnyChange[] => [
  ...CHANGES,
  ...(def.trash ? (['restored'] as const) : []),
  ...(def.merge ? (['merged'] as const) : []),
  ...(def.erase ? (['erased'] as const) : []),
  // A record in a pipeline (contract §19): its stage changed, beside `<type>.updated`.
  ...(def.pipeline ? (['stage_changed'] as const) : []),
];
// --- end trash ---
