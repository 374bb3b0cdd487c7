import * as v from 'valibot';
import type { Family } from '../errors.js';
import { parseWith, rejectUnknownFields, requireId, requireName } from './common.js';
import { RECORD_READ_ONLY } from './records.js';

export interface RecordBodySpec<E extends v.ObjectEntries> {
  family: Family;
  writable: E;
  /** Computed fields of the resource (read-only besides the common ones). */
  computed?: readonly string[];
  /** The required name field and its `*_required` code. */
  nameField: keyof E & string;
  nameCode: string;
}

/**
 * Validates a create or update body in the contract's order: unknown/read-only fields, then
 * `id`, then the required name, then every field's type and rules (with details).
 */
export function parseRecordBody<E extends v.ObjectEntries>(
  spec: RecordBodySpec<E>,
  body: Record<string, unknown>,
  mode: 'create' | 'update',
): { id: string | undefined; fields: Partial<v.InferOutput<v.ObjectSchema<E, undefined>>> } {
  const writable = Object.keys(spec.writable);
  rejectUnknownFields(spec.family, body, {
    allowed: mode === 'update' ? ['id', ...writable] : writable,
    readOnly: [...RECORD_READ_ONLY, ...(spec.computed ?? [])],
  });
  const id = mode === 'update' ? requireId(spec.family, body) : undefined;
  requireName(spec.nameCode, spec.nameField, body, mode);
  const { id: _id, ...rest } = body;
  const fields = parseWith(spec.family, v.partial(v.object(spec.writable)), rest);
  return { id, fields: fields as Partial<v.InferOutput<v.ObjectSchema<E, undefined>>> };
}

/**
 * The body parseRecordBody accepts, as one schema: the writable fields (partial), the name
 * required on create, `id` (a UUID) required on update, nothing else. parseRecordBody stays
 * procedural (it reports the contract's codes in the contract's order); this schema describes
 * the same shape for the OpenAPI document and the client's types.
 */
export function recordBodySchema<E extends v.ObjectEntries, N extends keyof E & string>(spec: { writable: E; nameField: N }, mode: 'create'): v.StrictObjectSchema<Omit<{ [K in keyof E]: v.OptionalSchema<E[K], undefined> }, N> & { [K in N]: E[K] }, undefined>;
export function recordBodySchema<E extends v.ObjectEntries>(spec: { writable: E }, mode: 'update'): v.StrictObjectSchema<{ id: v.SchemaWithPipe<readonly [v.StringSchema<undefined>, v.UuidAction<string, string>]> } & { [K in keyof E]: v.OptionalSchema<E[K], undefined> }, undefined>;
export function recordBodySchema(spec: { writable: v.ObjectEntries; nameField?: string }, mode: 'create' | 'update') {
  const optional = Object.fromEntries(Object.entries(spec.writable).map(([k, s]) => [k, v.optional(s)]));
  if (mode === 'create') return v.strictObject({ ...optional, [spec.nameField!]: spec.writable[spec.nameField!]! });
  return v.strictObject({ id: v.pipe(v.string(), v.uuid('must be a UUID')), ...optional });
}
