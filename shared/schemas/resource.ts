/**
 * The resource definition: one declaration per family, with every operation the family has
 * (CRUD or not: `rotate-secret`, `deliveries`, `start`, `cancel`, `address`, `batch-*`, `restore`,
 * `merge` …), each with its body, its result, its table access, its other bindings and its
 * documentation. Derived from it, with nothing written twice:
 *
 * - the registry entries (routes, Lambdas, grants): `registryEntries` in shared/http/registry.ts;
 * - the body parsing, in the contract's order: `parseOperation` below;
 * - the handler (name, family, access, parse, idempotency): `handle(resource, verb, run)` in
 *   shared/http/resource.ts (record families: shared/http/records.ts);
 * - the API shape of a stored item (`toApi`): `apiShape(record)` below;
 * - the OpenAPI operations and components, and the client's types: shared/openapi/operations.ts.
 *
 * Record families (contacts, companies …) get theirs from their entity definition
 * (`entityResource` in resources/entities.ts); the other families declare theirs in
 * `resources/<family>.ts`. The list of every family is `RESOURCES` in resources/index.ts.
 */
import type * as v from 'valibot';
import type { Bindings } from '../config/bindings.js';
import type { Family } from '../errors.js';
import { parseWith, rejectUnknownFields, requireId, requireName } from './common.js';
import type { KeyDeclarations } from './keys/define.js';
import type { ItemKind } from './policies.js';

/**
 * What an operation does to its family's records: `read` or `write`. It is the scope the
 * operation needs (`<family>:read|write`, shared/auth/scopes.ts) and its table grant (`read`:
 * read-only).
 */
export type Access = 'read' | 'write';

/** How one operation is described in the OpenAPI document. */
export interface OperationDoc {
  summary: string;
  description?: string;
  /** The body, as the handler validates it. */
  input: v.GenericSchema;
  /** `result` of the success envelope. */
  result: v.GenericSchema;
  /** Error codes beyond the ones derived from the family and verb (shared/schemas/error-codes.ts). */
  errors?: readonly string[];
}

/**
 * The body rules applied before the input schema, in the contract's order: unknown and read-only
 * fields by name (`allowed` are the input schema's keys), then ids (`<family>.invalid_id`), then
 * required names (`<code>`), then further checks with their own codes, then the schema.
 */
export interface BodyRules {
  /** Fields of the resource a client may not set: named `field is read-only` rather than `unknown field`. */
  readOnly?: readonly string[];
  /** Id fields, checked in order: missing is `invalid_request`, not a UUID is `<family>.invalid_id`; lowercased. */
  ids?: readonly string[];
  /** Required names: missing (on create) or blank is `code`. */
  required?: readonly { field: string; code: string; mode: 'create' | 'update' }[];
  /** Further checks with codes of their own (`webhooks.invalid_url`), run after the ones above. */
  checks?: readonly ((body: Record<string, unknown>) => void)[];
}

export interface OperationDecl<I = unknown> extends OperationDoc {
  access: Access;
  /**
   * Honours `Idempotency-Key` (contract §7; every operation that creates something but
   * `api-keys-create`): the one source of it. The handler builders (shared/http/) add the
   * idempotency middleware from it (a handler disagreeing with it fails when loaded), its
   * function may write the control table's idempotency items (policies.ts), and the OpenAPI
   * document offers the header.
   */
  idempotent?: true;
  /**
   * Items that are not records the operation reads or writes beyond what every operation does
   * (the rate-limit bucket and key use, the cursor key of read operations): shared/schemas/policies.ts.
   */
  items?: { reads?: readonly ItemKind[]; writes?: readonly ItemKind[] };
  /** What the function may touch beyond the table (shared/config/bindings.ts; lib/bindings.ts). */
  bindings?: Omit<Bindings, 'table'>;
  /** Body rules of the standard parse (`parseOperation`). */
  body?: BodyRules;
  /** A parse of its own, for a body the standard rules cannot say (normalised time ranges, nested filters). */
  parse?: (body: Record<string, unknown>) => I;
}

export interface ResourceDefinition<Ops extends Record<string, OperationDecl<unknown>> = Record<string, OperationDecl<unknown>>> {
  /** Error family (`webhooks`): codes `<family>.<name>`, scopes `<family>:read|write`. */
  family: Family;
  /** Operation prefix and handler folder (`custom-fields`): `POST /api/<prefix>-<verb>`, `functions/<prefix>/<verb>.ts`. */
  prefix: string;
  /**
   * The family's keys and index compositions (shared/schemas/keys/): the data layer's key
   * builders are derived from these declarations (shared/db/table.ts `keys`).
   */
  keys: KeyDeclarations;
  /** Names of the family's index partitions (record families: tags, references, lookups, values, search words). */
  indexes?: KeyDeclarations;
  /** Named schemas of the OpenAPI document (the document refers to them wherever they are used). */
  components: Record<string, v.GenericSchema>;
  /** Every operation of the family, by verb (`create`, `rotate-secret`, `batch-get`). */
  operations: Ops;
}

/** Declares a family's resource (identity function that keeps each operation's literal types). */
export const defineResource = <const Ops extends Record<string, OperationDecl<unknown>>>(def: ResourceDefinition<Ops>): ResourceDefinition<Ops> => def;

/** `POST /api/<name>`. */
export const operationName = (def: Pick<ResourceDefinition, 'prefix'>, verb: string): string => `${def.prefix}-${verb}`;

/** What an operation's run receives: its own parse's result, else its input schema's output. */
export type InputOfOp<O> = O extends { parse: (body: Record<string, unknown>) => infer I } ? I : O extends { input: infer S extends v.GenericSchema } ? v.InferOutput<S> : never;

/** Parses a body for an operation of `def`: its own `parse`, else the body rules then its input schema. */
export function parseOperation<O extends OperationDecl<unknown>>(family: Family, op: O, body: Record<string, unknown>): InputOfOp<O> {
  if (op.parse) return op.parse(body) as InputOfOp<O>;
  const entries = 'entries' in op.input ? (op.input.entries as Record<string, unknown>) : {};
  const rules = op.body ?? {};
  rejectUnknownFields(family, body, { allowed: Object.keys(entries), readOnly: rules.readOnly });
  const ids = Object.fromEntries((rules.ids ?? []).map((field) => [field, requireId(family, body, field)]));
  for (const r of rules.required ?? []) requireName(r.code, r.field, body, r.mode);
  for (const check of rules.checks ?? []) check(body);
  return { ...(parseWith(family, op.input, body) as object), ...ids } as InputOfOp<O>;
}

/**
 * The API shape of a stored item: the record schema's fields, in its order, and nothing else
 * (no key attributes, no secrets). `fill` is the value of a field the item lacks (older items).
 */
export function apiShape<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(record: S, fill?: unknown): (item: object) => v.InferOutput<S> {
  const fields = Object.keys(record.entries);
  return (item) => {
    const source = item as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of fields) out[k] = fill === undefined ? source[k] : (source[k] ?? fill);
    return out as v.InferOutput<S>;
  };
}

/** Body rules of an operation that takes only `id` (get, delete, cancel …). */
export const BY_ID: BodyRules = { ids: ['id'] };
