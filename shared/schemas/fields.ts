/**
 * Field builders: one call declares a field's input rule, its output (API) schema, its empty
 * value, how it is documented, and what the data layer must know about it (references, enums).
 * Entity definitions (entities/*.ts) are made of these; everything else derives from them.
 */
import * as v from 'valibot';
import {
  countInteger,
  customFieldsInput,
  emailString,
  httpUrlString,
  nameString,
  notesString,
  plainString,
  refId,
  tagList,
} from './primitives.js';

export interface Doc {
  description: string;
  example?: unknown;
}

/** What the data layer and the domain need to know about a reference field. */
export interface RefInfo {
  /** Entity type referenced (`company`, `contact`, …). */
  target: string;
  /** An array of ids (`contact_ids`) rather than one id or null. */
  many: boolean;
  /** The computed read-only field holding the referenced record's current name, if any. */
  nameField?: string;
}

export interface FieldSpec<I extends v.GenericSchema | undefined = v.GenericSchema | undefined, O extends v.GenericSchema = v.GenericSchema> {
  /** The rule a client's value must pass; undefined for read-only fields. */
  input: I;
  /** The field as every record returned shows it. */
  output: O;
  /** The value of a field never set ("" / null / [] / {} / false / a default). */
  empty: v.InferOutput<O>;
  ref?: RefInfo;
  /** Allowed values of an enumerated field (indexed for `any of` filters). */
  values?: readonly string[];
  /** The record's custom field values. */
  custom?: true;
  /** Record tags (indexed for `all of` filters). */
  tags?: true;
  /** Its type for `filter` and `sort` (contract §17: the type gives the operators); none for `custom_fields`. */
  type?: FieldType;
}

/** The types of contract §17: each gives a field its filter operators and whether it sorts. */
export const FIELD_TYPES_17 = ['text', 'number', 'datetime', 'date', 'boolean', 'enum', 'set', 'id'] as const;
export type FieldType = (typeof FIELD_TYPES_17)[number];

/**
 * The schema with its description and example. The metadata goes right after the root type (a
 * JSON Schema converter reading inputs stops at the first transformation of a pipe, so metadata
 * placed after `trim` or `transform` would be lost from the input documentation).
 */
const documented = <S extends v.GenericSchema>(schema: S, doc: Doc): v.SchemaWithPipe<readonly [S, v.MetadataAction<v.InferOutput<S>, { description: string }>]> => {
  const meta = v.metadata({ description: doc.description, ...(doc.example !== undefined ? { examples: [doc.example] } : {}) });
  if ('pipe' in schema && Array.isArray(schema.pipe)) {
    const [root, ...rest] = schema.pipe as unknown[];
    return (v.pipe as (...items: unknown[]) => unknown)(root, meta, ...rest) as never;
  }
  return v.pipe(schema, meta) as never;
};

const uuidOut = v.pipe(v.string(), v.uuid());
const dateTimeOut = v.pipe(v.string(), v.isoTimestamp());

function field<I extends v.GenericSchema | undefined, O extends v.GenericSchema>(
  input: I,
  output: O,
  empty: v.InferOutput<O>,
  doc: Doc,
  extra: Partial<Pick<FieldSpec, 'ref' | 'values' | 'custom' | 'tags' | 'type'>> = {},
): FieldSpec<I extends v.GenericSchema ? ReturnType<typeof documented<I>> : undefined, ReturnType<typeof documented<O>>> {
  return {
    input: (input ? documented(input, doc) : undefined) as never,
    output: documented(output, doc) as never,
    empty: empty as never,
    ...extra,
  };
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` naming a real calendar day. */
export function isRealDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
export const isIsoDateTime = (s: string) => ISO_DATETIME.test(s) && isRealDate(s.slice(0, 10)) && !Number.isNaN(Date.parse(s));

/** Datetime input, stored in the contract's form (UTC, milliseconds, `Z`). */
const dateTimeIn = v.pipe(
  v.string(),
  v.check(isIsoDateTime, 'must be an ISO 8601 datetime'),
  v.transform((s) => new Date(s).toISOString()),
);

export const f = {
  /** The record's required name (1–200 characters after trimming). */
  name: (doc: Doc) => field(nameString, v.string(), '', doc, { type: 'text' }),
  /** A plain string of at most `max` characters (default 500). */
  text: (doc: Doc, max = 500) =>
    field(max === 500 ? plainString : max === 10_000 ? notesString : v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`)), v.string(), '', doc, { type: 'text' }),
  email: (doc: Doc) => field(emailString, v.string(), '', doc, { type: 'text' }),
  url: (doc: Doc) => field(httpUrlString, v.string(), '', doc, { type: 'text' }),
  /** null, or a safe integer ≥ 0. */
  count: (doc: Doc) => field(countInteger, v.nullable(v.pipe(v.number(), v.integer())), null, doc, { type: 'number' }),
  /** null, or an integer in [min, max]. */
  intRange: (doc: Doc, min: number, max: number) =>
    field(
      v.nullable(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(min, `must be between ${min} and ${max}`), v.maxValue(max, `must be between ${min} and ${max}`))),
      v.nullable(v.pipe(v.number(), v.integer())),
      null,
      doc,
      { type: 'number' },
    ),
  bool: (doc: Doc) => field(v.boolean(), v.boolean(), false, doc, { type: 'boolean' }),
  /** One of `values`; `empty` is the default of a new record. */
  oneOf: <const T extends readonly [string, ...string[]]>(doc: Doc, values: T, empty: T[number]) =>
    field(v.picklist(values, `must be one of ${values.join(', ')}`), v.picklist(values), empty, doc, { values, type: 'enum' }),
  /** `""` or one of `values`. */
  optionalOneOf: <const T extends readonly [string, ...string[]]>(doc: Doc, values: T) =>
    field(v.picklist(['', ...values] as const, `must be "" or one of ${values.join(', ')}`), v.picklist(['', ...values] as const), '' as const, doc, { values, type: 'enum' }),
  /** `""` or a real date `YYYY-MM-DD`. */
  date: (doc: Doc) =>
    field(v.pipe(v.string(), v.check((s) => s === '' || isRealDate(s), 'must be "" or a real date in YYYY-MM-DD form')), v.string(), '', doc, { type: 'date' }),
  /** null or an ISO 8601 datetime (stored as UTC with milliseconds). */
  dateTime: (doc: Doc) => field(v.nullable(dateTimeIn), v.nullable(dateTimeOut), null, doc, { type: 'datetime' }),
  /** A datetime the server fills in when the client sends none (activities' `occurred_at`). */
  dateTimeDefaulted: (doc: Doc) => field(dateTimeIn, dateTimeOut, '', doc, { type: 'datetime' }),
  /** `""` or three upper-case letters. */
  currency: (doc: Doc) => field(v.pipe(v.string(), v.regex(/^([A-Z]{3})?$/, 'must be "" or three upper-case letters (ISO 4217)')), v.string(), '', doc, { type: 'text' }),
  tags: (doc: Doc) => field(tagList, v.array(v.string()), [] as string[], doc, { tags: true, type: 'set' }),
  customFields: (doc: Doc) => field(customFieldsInput, v.record(v.string(), v.unknown()), {} as Record<string, unknown>, doc, { custom: true }),
  /** null or the id of a `target` record of the account; `nameField` names its computed name field. */
  ref: (doc: Doc, target: string, nameField?: string) =>
    field(refId, v.nullable(uuidOut), null as string | null, doc, { ref: { target, many: false, nameField }, type: 'id' }),
  /** Up to `max` distinct ids of `target` records of the account. */
  refs: (doc: Doc, target: string, max = 100) =>
    field(
      v.pipe(v.array(v.string('must be an array of ids')), v.transform((ids) => [...new Set(ids.map((i) => i.toLowerCase()))]), v.maxLength(max, `at most ${max} distinct ids`)),
      v.array(uuidOut),
      [] as string[],
      doc,
      { ref: { target, many: true }, type: 'set' },
    ),
  /** Read-only fields: shown on every record, never set by a client. */
  computed: {
    text: (doc: Doc) => field(undefined, v.string(), '', doc, { type: 'text' }),
    dateTime: (doc: Doc) => field(undefined, v.nullable(dateTimeOut), null as string | null, doc, { type: 'datetime' }),
    id: (doc: Doc) => field(undefined, v.nullable(uuidOut), null as string | null, doc, { type: 'id' }),
  },
};

/**
 * The fields of a record in a pipeline (contract §19), apart from `f` so that only the bundles of
 * a family in pipelines carry them.
 */
export const placed = {
  /** null or the id of something of the account that is not a record (a pipeline, a stage): the domain checks it. */
  id: (doc: Doc) => field(refId, v.nullable(uuidOut), null as string | null, doc, { type: 'id' }),
  /** Read-only: null or an integer. */
  number: (doc: Doc) => field(undefined, v.nullable(v.pipe(v.number(), v.integer())), null as number | null, doc, { type: 'number' }),
  /** Read-only: a map the domain keeps (`{}` when never set); no §17 type: not filterable. */
  map: <O extends v.GenericSchema>(doc: Doc, value: O) => field(undefined, v.record(v.string(), value), {} as never, doc),
};
