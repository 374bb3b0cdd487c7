/**
 * What the data layer derives from an entity definition (shared/schemas/entities/): the index
 * entries of a record (tags, references, exact lookups, enumerated values), its search entries
 * (word prefixes) and how a stored record reads now (its references as the account's meta shows
 * them: pending renames, deletions and merges). The record store writes the entries; the list
 * engine re-checks candidates against the current view.
 */
import { normalize, recordPrefixes, recordWords } from '../search/index.js';
import { emptyFields, type EntityDefinition, recordFields, refFields, tagsField } from '../schemas/entities/index.js';
import { type AccountMeta, currentRef } from './meta.js';
import { CUSTOM_FIELD_PREFIX, entityFilterFields, type FieldType, sortKeyOf } from '../schemas/filter.js';
import { type EntityType, indexName, keys } from './table.js';

type Def = EntityDefinition;
type Ref = ReturnType<typeof refFields>[number];

/** Fields whose values are indexed for `values`/`bool` list filters. */
const valueFields = (def: Def) => [...new Set(Object.values(def.filters).filter((f) => f.kind === 'values' || f.kind === 'bool').map((f) => f.field))];

interface Plan {
  tags: string | undefined;
  refs: Ref[];
  values: string[];
  fields: string[];
  empty: Record<string, unknown>;
}

/** What a definition indexes and shows, worked out once per definition (every write, read and stream record asks). */
const plans = new WeakMap<Def, Plan>();
export function modelPlan(def: Def): Plan {
  let plan = plans.get(def);
  if (!plan) plans.set(def, (plan = { tags: tagsField(def), refs: refFields(def), values: valueFields(def), fields: recordFields(def), empty: emptyFields(def) }));
  return plan;
}

/** Every word a record is found by, with the current name of its references. */
export const searchWords = (def: Def, record: Record<string, unknown>) => (def.search ? recordWords(def.search(record)) : new Set<string>());

/**
 * The index partitions a record belongs to, written in the record's own transaction: tags,
 * references, exact lookups and enumerated values. Search prefixes are kept apart
 * (`searchNamesOf`): the stream worker writes them after the record (contract §4: search may lag
 * a write by up to 2 s locally), which keeps them off the write's latency and billed at one
 * unit per entry instead of two.
 */
export function indexNamesOf(def: Def, r: Record<string, unknown>): string[] {
  const { tags, refs, values } = modelPlan(def);
  const names: string[] = [];
  if (tags && Array.isArray(r[tags])) names.push(...(r[tags] as string[]).map(indexName.tag));
  for (const ref of refs) {
    const value = r[ref.field];
    const ids = ref.many ? (Array.isArray(value) ? (value as string[]) : []) : typeof value === 'string' ? [value] : [];
    names.push(...ids.map((id) => indexName.ref(ref.target as EntityType, id)));
  }
  if (def.lookup) {
    const value = r[def.lookup.field];
    if (typeof value === 'string' && value.trim() !== '') names.push(indexName[def.lookup.index](normalize(value.trim())));
  }
  for (const field of values) {
    const value = r[field];
    if (value !== undefined && value !== null && value !== '') names.push(indexName.value(field, String(value)));
  }
  return [...new Set(names)];
}

/** Custom fields whose sort-ordered entries are kept: their §17 type, by definition id (the account's META `ix#` attributes). */
export type IndexedCustom = Readonly<Record<string, FieldType>>;

/** A record's value of a sorted field (`custom_fields.<id>` reads its custom field value). */
export function sortedFieldValue(r: Record<string, unknown>, field: string): unknown {
  if (!field.startsWith(CUSTOM_FIELD_PREFIX)) return r[field];
  return (r.custom_fields as Record<string, unknown> | undefined)?.[field.slice(CUSTOM_FIELD_PREFIX.length)];
}

/** The sort key of a record's entry in a sorted field's partition: its value's ordered encoding, or the empty section, then its list position. */
export function sortedKeyOf(type: FieldType, value: unknown, position: string): string {
  const key = sortKeyOf(type, value);
  return key === undefined ? keys.sortedEmpty(position) : keys.sortedValue(key, position);
}

/** A record's list position (`createdAt#id`): what its entries are ordered by within a value. */
export const positionKeyOf = (r: Record<string, unknown>): string => keys.order(String(r.created_at), String(r.id));

/**
 * The sort-ordered entries of a record (contract §17), by field: the definition's `sorted`
 * fields and the account's indexed custom fields, each with its sort key. Written by the record
 * store in a create's (or restore's) transaction, and beside an update for the fields whose key
 * changed (shared/db/writes.ts), before it answers.
 */
export function sortedEntriesOf(def: Def, r: Record<string, unknown>, custom: IndexedCustom = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const position = positionKeyOf(r);
  const types = entityFilterFields(def);
  for (const field of def.sorted ?? []) out[field] = sortedKeyOf(types[field]!.type, r[field], position);
  for (const [cid, type] of Object.entries(custom)) out[`${CUSTOM_FIELD_PREFIX}${cid}`] = sortedKeyOf(type, sortedFieldValue(r, `${CUSTOM_FIELD_PREFIX}${cid}`), position);
  return out;
}

/** The search-prefix partitions of a record (maintained by the stream worker through the record store). */
export const searchNamesOf = (def: Def, r: Record<string, unknown>): string[] => (def.search ? recordPrefixes(searchWords(def, r)).map(indexName.word) : []);

/**
 * A stored record's fields as the API shows them (custom fields aside): every field of the
 * definition (its empty value when absent) and, with the account's meta, each single reference
 * and its computed name current.
 */
export function currentView(def: Def, item: Record<string, unknown>, meta?: AccountMeta): Record<string, unknown> {
  const { fields, empty, refs } = modelPlan(def);
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = item[f] !== undefined ? item[f] : f in empty ? structuredClone(empty[f]) : '';
  if (meta) {
    for (const ref of refs) {
      if (ref.many) continue;
      const current = currentRef(meta, ref.target as EntityType, item[ref.field], ref.nameField ? item[ref.nameField] : '');
      out[ref.field] = current.id;
      if (ref.nameField) out[ref.nameField] = current.name;
    }
  }
  return out;
}
