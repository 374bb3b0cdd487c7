import * as v from 'valibot';
import { ApiError, invalidRequest } from '../errors.js';
import { parseWith, rejectUnknownFields, requireId, requireName } from './common.js';
import { customField, type EntityDefinition, readOnlyFields, settable, writableEntries } from './entities/define.js';

/** A validated create or update body: `id` on update, and the fields sent (after their rules). */
export interface ParsedBody {
  id: string | undefined;
  fields: Record<string, unknown>;
}

/** Keys JavaScript treats specially: never a custom field id, always reported (not dropped). */
const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'];

const bodySchemas = new WeakMap<object, Record<string, v.GenericSchema>>();
function partialSchema(def: EntityDefinition, mode: 'create' | 'update'): v.GenericSchema {
  let m = bodySchemas.get(def);
  if (!m) bodySchemas.set(def, (m = {}));
  if (!m[mode]) {
    const entries = writableEntries(def) as v.ObjectEntries;
    m[mode] = v.partial(v.object(Object.fromEntries(settable(def, mode).map((k) => [k, entries[k]!]))));
  }
  return m[mode];
}

/**
 * Validates a create or update body in the contract's order: unknown and read-only fields,
 * then `id`, then the required field, then `custom_fields` being an object, then every field's
 * type and rules (with details).
 */
export function parseRecordBody(def: EntityDefinition, body: Record<string, unknown>, mode: 'create' | 'update'): ParsedBody {
  const family = def.family;
  const writable = settable(def, mode);
  rejectUnknownFields(family, body, { allowed: mode === 'update' ? ['id', ...writable] : writable, readOnly: readOnlyFields(def, mode) });
  const id = mode === 'update' ? requireId(family, body) : undefined;
  if (writable.includes(def.required)) requireName(`${family}.${def.required}_required`, def.required, body, mode);
  const cf = customField(def);
  const custom = cf ? body[cf] : undefined;
  // valibot's record takes an array (its indexes would pass for keys): a JSON object only.
  if (Array.isArray(custom)) throw invalidRequest(family, `${cf} must be an object of values keyed by custom field definition id`, [{ path: cf!, message: 'must be an object' }]);
  if (custom && typeof custom === 'object') {
    const reserved = Object.keys(custom).filter((k) => RESERVED_KEYS.includes(k));
    if (reserved.length) {
      throw new ApiError(
        `${family}.invalid_custom_fields`,
        'custom field values do not match their definitions',
        reserved.map((k) => ({ path: `${cf}.${k}`, message: `is not a ${def.type} custom field of this account (keys are definition ids: see custom-fields-list)` })),
      );
    }
  }
  const { id: _id, ...rest } = body;
  return { id, fields: parseWith(family, partialSchema(def, mode), rest) as Record<string, unknown> };
}
