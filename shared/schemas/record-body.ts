import * as v from 'valibot';
import type { Family } from '../http/errors.js';
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
