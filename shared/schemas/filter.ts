/**
 * Filtering and sorting on any field (contract §17), pure: a field's type (declared by its field
 * builder, shared/schemas/fields.ts, or mapped from a custom field's `field_type`) gives its
 * operators; one parser checks a `filter` tree and a `sort` for every family, reporting each
 * problem with its path (`filter.and[1].value`); one evaluator decides whether a record matches,
 * and one comparator orders records for a `sort`. The data layer runs them on the records it reads.
 */
import * as v from 'valibot';
import { normalize } from '../search/tokenize.js';
import { type FieldType, isIsoDateTime, isRealDate } from './fields.js';
import { isUuid } from './primitives.js';

export type { FieldType };

/** A problem of a filter: where (`filter.and[1].value`) and why (the shape of an ApiError's details). */
export interface FilterProblem {
  path: string;
  message: string;
}

/** What entityFilterFields reads of an entity definition (structural: no import of the definitions). */
interface FieldsOwner {
  fields: Record<string, { type?: FieldType; values?: readonly string[]; ref?: unknown }>;
}

export const OPERATORS = {
  text: ['eq', 'neq', 'in', 'nin', 'prefix', 'exists', 'not_exists'],
  number: ['eq', 'neq', 'in', 'nin', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
  datetime: ['eq', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
  date: ['eq', 'lt', 'lte', 'gt', 'gte', 'between', 'exists', 'not_exists'],
  boolean: ['eq', 'exists', 'not_exists'],
  enum: ['eq', 'neq', 'in', 'nin', 'exists', 'not_exists'],
  set: ['contains', 'contains_any', 'contains_all', 'exists', 'not_exists'],
  id: ['eq', 'neq', 'in', 'nin', 'exists', 'not_exists'],
} as const satisfies Record<FieldType, readonly string[]>;

export type Operator = (typeof OPERATORS)[FieldType][number];
/** Every operator once (a function: the record writes, which bundle this module, do not compute it). */
const allOperators = (): Operator[] => [...new Set(Object.values(OPERATORS).flat())];

/** Types a `sort` may name. */
export const SORTABLE_TYPES: readonly FieldType[] = ['text', 'number', 'datetime', 'date', 'boolean', 'enum'];


export const FILTER_LIMITS = { depth: 4, conditions: 20, members: 20, values: 100 } as const;

/** What the parser and the evaluator know of a field. */
export interface FilterField {
  type: FieldType;
  /** The allowed values of an enumerated built-in field (a value outside them is refused). */
  values?: readonly string[];
  /** The members of a set are ids (`contact_ids`). */
  ids?: boolean;
  /** The field keeps sort-ordered entries (`ready`), or they are being built or removed (`building`: contract §17 `index_status`). */
  indexed?: 'ready' | 'building';
}

export type Condition = { field: string; op: Operator; value?: unknown };
export type Filter = Condition | { and: Filter[] } | { or: Filter[] } | { not: Filter };
export interface Sort {
  field: string;
  direction: 'asc' | 'desc';
}

const LIST_OPS = new Set<string>(['in', 'nin', 'contains_any', 'contains_all']);
const NO_VALUE_OPS = new Set<string>(['exists', 'not_exists']);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Why a single value does not fit a field of this type (undefined when it fits). */
function scalarProblem(field: FilterField, value: unknown): string | undefined {
  switch (field.type) {
    case 'text':
      return typeof value === 'string' && value.length > 0 && value.length <= 10_000 ? undefined : 'must be a non-empty string of at most 10000 characters';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'datetime':
      return typeof value === 'string' && isIsoDateTime(value) ? undefined : 'must be an ISO 8601 datetime with Z or an offset';
    case 'date':
      return typeof value === 'string' && isRealDate(value) ? undefined : 'must be a real date in YYYY-MM-DD form';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'enum':
      if (typeof value !== 'string' || value === '') return 'must be a non-empty string';
      return field.values && !field.values.includes(value) ? `must be one of ${field.values.filter((x) => x !== '').join(', ')}` : undefined;
    case 'id':
      return isUuid(value) ? undefined : 'must be a UUID';
    case 'set':
      if (field.ids) return isUuid(value) ? undefined : 'must be a UUID';
      return typeof value === 'string' && value.length > 0 ? undefined : 'must be a non-empty string';
  }
}

/**
 * Checks a `filter` (contract §17): the tree's shape, each field against `fieldOf`, each operator
 * against its field's type, each value against the operator and type, and the limits. Returns the
 * filter with ids lower-cased, or the problems found, each with its path.
 */
export function parseFilter(raw: unknown, fieldOf: (name: string) => FilterField | undefined, root = 'filter'): { filter?: Filter; errors: FilterProblem[] } {
  const errors: FilterProblem[] = [];
  let conditions = 0;
  const fail = (path: string, message: string) => {
    if (errors.length < 20) errors.push({ path, message });
  };
  const walk = (node: unknown, path: string, level: number): Filter | undefined => {
    if (level > FILTER_LIMITS.depth) {
      fail(path, `too deep: at most ${FILTER_LIMITS.depth} levels`);
      return undefined;
    }
    if (!isObject(node)) {
      fail(path, 'must be a condition { field, op, value } or a group { and | or | not }');
      return undefined;
    }
    const groupKeys = ['and', 'or', 'not'].filter((k) => k in node);
    if (groupKeys.length > 0) {
      const extra = Object.keys(node).filter((k) => k !== groupKeys[0]);
      if (groupKeys.length > 1 || extra.length > 0) {
        fail(path, 'a group has exactly one of and, or, not');
        return undefined;
      }
      const key = groupKeys[0] as 'and' | 'or' | 'not';
      if (key === 'not') {
        const inner = walk(node.not, `${path}.not`, level + 1);
        return inner && { not: inner };
      }
      const members = node[key];
      if (!Array.isArray(members) || members.length < 1 || members.length > FILTER_LIMITS.members) {
        fail(`${path}.${key}`, `must be an array of 1 to ${FILTER_LIMITS.members} members`);
        return undefined;
      }
      const out = members.map((m, i) => walk(m, `${path}.${key}[${i}]`, level + 1));
      return out.every((x) => x !== undefined) ? ({ [key]: out } as Filter) : undefined;
    }
    conditions++;
    for (const k of Object.keys(node)) if (!['field', 'op', 'value'].includes(k)) fail(`${path}.${k}`, 'unknown member: a condition has field, op and value');
    if (typeof node.field !== 'string') {
      fail(`${path}.field`, 'must be a field name');
      return undefined;
    }
    const field = fieldOf(node.field);
    if (!field) {
      fail(`${path}.field`, `unknown field ${node.field}`);
      return undefined;
    }
    const ops = OPERATORS[field.type] as readonly string[];
    if (typeof node.op !== 'string' || !ops.includes(node.op)) {
      const known = (allOperators() as string[]).includes(String(node.op));
      fail(`${path}.op`, `${known ? `operator ${String(node.op)} does not apply to` : 'unknown operator for'} ${node.field} (a ${field.type} field): use ${ops.join(', ')}`);
      return undefined;
    }
    const op = node.op as Operator;
    if (NO_VALUE_OPS.has(op)) {
      if ('value' in node) fail(`${path}.value`, `${op} takes no value`);
      return { field: node.field, op };
    }
    if (!('value' in node)) {
      fail(`${path}.value`, `${op} needs a value`);
      return undefined;
    }
    const value = node.value;
    const vpath = `${path}.value`;
    let ok = true;
    const scalar = (x: unknown, p: string) => {
      const problem = scalarProblem(field, x);
      if (problem) {
        fail(p, problem);
        ok = false;
      }
    };
    if (LIST_OPS.has(op)) {
      if (!Array.isArray(value) || value.length < 1 || value.length > FILTER_LIMITS.values) {
        fail(vpath, `must be an array of 1 to ${FILTER_LIMITS.values} values`);
        return undefined;
      }
      value.forEach((x, i) => scalar(x, `${vpath}[${i}]`));
    } else if (op === 'between') {
      if (!Array.isArray(value) || value.length !== 2) {
        fail(vpath, 'must be an array [from, to] of two values');
        return undefined;
      }
      value.forEach((x, i) => scalar(x, `${vpath}[${i}]`));
    } else {
      scalar(value, vpath);
    }
    if (!ok) return undefined;
    const lower = (x: unknown) => (field.type === 'id' || (field.type === 'set' && field.ids) ? String(x).toLowerCase() : x);
    return { field: node.field, op, value: Array.isArray(value) ? value.map(lower) : lower(value) };
  };
  const filter = walk(raw, root, 1);
  if (conditions > FILTER_LIMITS.conditions) fail(root, `too many conditions: at most ${FILTER_LIMITS.conditions} (found ${conditions})`);
  return errors.length ? { errors } : { filter, errors };
}

/** Checks a `sort`: a sortable field and a direction (default `asc`). Returns the sort or why not. */
export function parseSort(raw: unknown, fieldOf: (name: string) => FilterField | undefined): { sort?: Sort; error?: string } {
  if (!isObject(raw)) return { error: 'sort must be an object { field, direction }' };
  const extra = Object.keys(raw).filter((k) => k !== 'field' && k !== 'direction');
  if (extra.length) return { error: `unknown member of sort: ${extra.join(', ')}` };
  if (typeof raw.field !== 'string') return { error: 'sort.field must be a field name' };
  const field = fieldOf(raw.field);
  if (!field) return { error: `unknown sort field ${raw.field}` };
  if (!SORTABLE_TYPES.includes(field.type)) return { error: `${raw.field} is a ${field.type} field: sort on a field of type ${SORTABLE_TYPES.join(', ')}` };
  const direction = raw.direction ?? 'asc';
  if (direction !== 'asc' && direction !== 'desc') return { error: 'sort.direction must be asc or desc' };
  return { sort: { field: raw.field, direction } };
}

// --- meaning ------------------------------------------------------------------------------------

/** Empty (contract §17): null, absent, `""` or `[]`. */
export const isEmpty = (v: unknown): boolean => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);

/** Text as compared and sorted: case- and accent-insensitive. */
export const foldText = (s: string): string => normalize(s);

/**
 * A datetime as a string that sorts as its instant: epoch milliseconds (offset so negatives sort)
 * zero-padded, then the digits below the millisecond. Undefined for what is not a datetime.
 */
export function instantKey(s: string): string | undefined {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return undefined;
  const frac = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(s)?.[1] ?? '';
  const below = frac.slice(3).padEnd(6, '0').slice(0, 6);
  // In BigInt: ms + 9e15 passes 2^53 past the year 2255 (float addition lost the milliseconds there).
  return `${String(BigInt(ms) + 9_000_000_000_000_000n).padStart(17, '0')}.${below}`;
}

/** The comparable form of a non-empty value of a scalar type (undefined: treated as empty). */
export function comparable(type: FieldType, v: unknown): string | number | undefined {
  if (isEmpty(v)) return undefined;
  switch (type) {
    case 'text':
      return typeof v === 'string' ? foldText(v) : undefined;
    case 'number':
      return typeof v === 'number' ? v : undefined;
    case 'datetime':
      return typeof v === 'string' ? instantKey(v) : undefined;
    case 'date':
    case 'enum':
      return typeof v === 'string' ? v : undefined;
    case 'id':
      return typeof v === 'string' ? v.toLowerCase() : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? (v ? 1 : 0) : undefined;
    case 'set':
      return undefined;
  }
}

/** Characters of a text value an index entry keeps (a DynamoDB sort key holds at most 1,024 bytes); longer values tie on it and fall back to id order. */
export const SORT_KEY_TEXT_LENGTH = 200;

/** A number as 16 hex digits that sort as the numbers do, negatives included (IEEE 754 bits, sign flipped, negatives inverted). */
function numberKey(n: number): string {
  const bytes = new DataView(new ArrayBuffer(8));
  bytes.setFloat64(0, n === 0 ? 0 : n);
  let hi = bytes.getUint32(0);
  let lo = bytes.getUint32(4);
  if (hi & 0x80000000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x80000000) >>> 0;
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/**
 * The ordered encoding of a non-empty value of a sortable type (undefined: empty), for the
 * sort-ordered index entries (contract §17): as strings compare, the values compare as
 * `comparable` orders them. Text: its case- and accent-insensitive form, cut to
 * SORT_KEY_TEXT_LENGTH characters; numbers: numberKey; datetimes: their instant; dates, enums: as
 * they are; booleans: 0 and 1.
 */
export function sortKeyOf(type: FieldType, v: unknown): string | undefined {
  const c = comparable(type, v);
  if (c === undefined) return undefined;
  if (type === 'number') return numberKey(c as number);
  if (type === 'boolean') return String(c);
  // eslint-disable-next-line no-control-regex
  const s = String(c).replace(/[\u0000\u0001]/g, '');
  return type === 'text' ? [...s].slice(0, SORT_KEY_TEXT_LENGTH).join('') : s;
}

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

function holds(c: Condition, field: FilterField, raw: unknown): boolean {
  if (c.op === 'exists') return !isEmpty(raw);
  if (c.op === 'not_exists') return isEmpty(raw);
  if (field.type === 'set') {
    const have = Array.isArray(raw) ? raw.map((x) => (field.ids ? String(x).toLowerCase() : x)) : [];
    if (c.op === 'contains') return have.includes(c.value);
    if (c.op === 'contains_any') return (c.value as unknown[]).some((x) => have.includes(x));
    return (c.value as unknown[]).every((x) => have.includes(x));
  }
  if (c.op === 'neq') return !holds({ ...c, op: 'eq' }, field, raw);
  if (c.op === 'nin') return !holds({ ...c, op: 'in' }, field, raw);
  const v = comparable(field.type, raw);
  if (v === undefined) return false;
  const of = (x: unknown) => comparable(field.type, x)!;
  switch (c.op) {
    case 'eq':
      return cmp(v, of(c.value)) === 0;
    case 'in':
      return (c.value as unknown[]).some((x) => cmp(v, of(x)) === 0);
    case 'prefix':
      return typeof v === 'string' && v.startsWith(of(c.value) as string);
    case 'lt':
      return cmp(v, of(c.value)) < 0;
    case 'lte':
      return cmp(v, of(c.value)) <= 0;
    case 'gt':
      return cmp(v, of(c.value)) > 0;
    case 'gte':
      return cmp(v, of(c.value)) >= 0;
    case 'between': {
      const [a, b] = c.value as [unknown, unknown];
      const upper = cmp(v, of(b));
      return cmp(v, of(a)) >= 0 && (field.type === 'datetime' ? upper < 0 : upper <= 0);
    }
    default:
      return false;
  }
}

/** Whether a record (its fields read through `get`) matches a parsed filter. */
export function matchesFilter(filter: Filter, fields: Readonly<Record<string, FilterField>>, get: (field: string) => unknown): boolean {
  if ('and' in filter) return filter.and.every((f) => matchesFilter(f, fields, get));
  if ('or' in filter) return filter.or.some((f) => matchesFilter(f, fields, get));
  if ('not' in filter) return !matchesFilter(filter.not, fields, get);
  return holds(filter, fields[filter.field]!, get(filter.field));
}

/** The fields a filter names. */
export function filterFields(filter: Filter | undefined): string[] {
  if (!filter) return [];
  if ('and' in filter) return filter.and.flatMap(filterFields);
  if ('or' in filter) return filter.or.flatMap(filterFields);
  if ('not' in filter) return filterFields(filter.not);
  return [filter.field];
}

/** A record's place in a sort: its comparable value (null when empty) and its list position (`createdAt#id`). */
export type SortPosition = [value: string | number | null, position: string];

export const sortPosition = (type: FieldType, value: unknown, position: string): SortPosition => [comparable(type, value) ?? null, position];

/** Orders two positions: empty values last in both directions; ties by list position (`created_at`, then id) in the same direction. */
export function compareSort(a: SortPosition, b: SortPosition, direction: 'asc' | 'desc'): number {
  const sign = direction === 'asc' ? 1 : -1;
  if (a[0] === null && b[0] !== null) return 1;
  if (b[0] === null && a[0] !== null) return -1;
  const byValue = a[0] === null || b[0] === null ? 0 : cmp(a[0], b[0]);
  return sign * (byValue !== 0 ? byValue : cmp(a[1], b[1]));
}

/** The §17 type of a custom field, by its definition's `field_type` (contract §5). */
export const CUSTOM_FIELD_FILTER_TYPES = {
  text: 'text',
  url: 'text',
  email: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
  select: 'enum',
  multi_select: 'set',
} as const satisfies Record<string, FieldType>;

/** The prefix of a custom field's name in `filter` and `sort`: `custom_fields.<definition id>`. */
export const CUSTOM_FIELD_PREFIX = 'custom_fields.';

const builtIns = new WeakMap<object, Readonly<Record<string, FilterField>>>();
/**
 * The fields of a family's records that `filter` and `sort` may name, with their types, from the
 * definition's field builders: every field the record shows (`account_id` and `custom_fields`
 * aside), `id`, `created_by`, `created_at` and `updated_at` included.
 */
export function entityFilterFields(def: FieldsOwner): Readonly<Record<string, FilterField>> {
  let out = builtIns.get(def);
  if (!out) {
    const fields: Record<string, FilterField> = { id: { type: 'id' }, created_by: { type: 'id' } };
    for (const [name, spec] of Object.entries(def.fields)) {
      if (!spec.type) continue;
      fields[name] = { type: spec.type, ...(spec.type === 'enum' && spec.values ? { values: spec.values } : {}), ...(spec.type === 'set' && spec.ref ? { ids: true } : {}) };
    }
    fields.created_at = { type: 'datetime' };
    fields.updated_at = { type: 'datetime' };
    builtIns.set(def, (out = fields));
  }
  return out;
}

// --- the API's schemas (OpenAPI components `Filter`, `FilterCondition`, `Sort`) -----------------
// The parse of a list body takes `filter` and `sort` as they come and parseFilter/parseSort check
// them (the paths and reasons of `invalid_filter`); these schemas document them and type the client.
// Built on first use (`filterSchemas()`), so that the functions that only evaluate filters or
// encode sort keys (every record write) do not bundle them.

function buildFilterSchemas() {
  const scalar = v.union([v.string(), v.number(), v.boolean()]);
  const condition = v.pipe(
    v.strictObject({
      field: v.pipe(v.string(), v.metadata({ description: 'A field of the record as returned (not account_id), or custom_fields.<definition id>', examples: ['first_name'] })),
      op: v.pipe(v.picklist(allOperators()), v.metadata({ description: "An operator of the field's type (text, number, datetime, date, boolean, enum, set, id)" })),
      value: v.optional(
        v.pipe(
          v.union([scalar, v.array(scalar)]),
          v.metadata({ description: 'None for exists/not_exists; an array of 1–100 values for in, nin, contains_any, contains_all; [from, to] for between; else one value' }),
        ),
      ),
    }),
    v.metadata({ description: 'A condition on one field', examples: [{ field: 'employee_count', op: 'gt', value: 50 }] }),
  );
  const members = v.pipe(v.array(v.lazy(() => filter)), v.minLength(1), v.maxLength(FILTER_LIMITS.members));
  const filter: v.GenericSchema = v.pipe(
    v.union([condition, v.strictObject({ and: members }), v.strictObject({ or: members }), v.strictObject({ not: v.lazy(() => filter) })]),
    v.metadata({
      description: 'A condition, or a group of 1–20 members (and, or) or one (not); at most 4 levels and 20 conditions (contract §17)',
      examples: [{ and: [{ field: 'status', op: 'eq', value: 'open' }, { field: 'amount', op: 'gt', value: 1000000 }] }],
    }),
  );
  const sort = v.pipe(
    v.strictObject({
      field: v.pipe(v.string(), v.metadata({ description: 'A field of type text, number, datetime, date, boolean or enum (custom ones too)' })),
      direction: v.optional(v.picklist(['asc', 'desc'])),
    }),
    v.metadata({ description: 'Order of the list: empty values last in both directions, ties by id; default created_at desc', examples: [{ field: 'last_name', direction: 'asc' }] }),
  );
  return { filter, condition, sort };
}

let filterSchemasBuilt: ReturnType<typeof buildFilterSchemas> | undefined;

/** The schemas of `filter`, one of its conditions and `sort` (the same objects on every call). */
export const filterSchemas = (): ReturnType<typeof buildFilterSchemas> => (filterSchemasBuilt ??= buildFilterSchemas());
