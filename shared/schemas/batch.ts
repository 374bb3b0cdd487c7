/**
 * The bodies of batch operations (contract §13): `{ items: [...] }` or `{ ids: [...] }` with 1 to
 * 100 entries. Anything else is the whole call's `<family>.invalid_request` and nothing is applied;
 * each entry is then checked on its own, as its single operation checks its body.
 */
import type { Family } from '../errors.js';
import { invalidRequest } from '../errors.js';
import { rejectUnknownFields } from './common.js';

export const MAX_BATCH_ITEMS = 100;

function parseList(family: Family, body: Record<string, unknown>, field: 'items' | 'ids'): unknown[] {
  rejectUnknownFields(family, body, { allowed: [field] });
  const list = body[field];
  if (!Array.isArray(list)) throw invalidRequest(family, `${field} must be an array of 1 to ${MAX_BATCH_ITEMS} entries`, [{ path: field, message: list === undefined ? 'is required' : 'must be an array' }]);
  if (list.length < 1 || list.length > MAX_BATCH_ITEMS) {
    throw invalidRequest(family, `${field} must hold 1 to ${MAX_BATCH_ITEMS} entries (got ${list.length})`, [{ path: field, message: `must hold 1 to ${MAX_BATCH_ITEMS} entries` }]);
  }
  return list;
}

/** `{ items }` of -batch-create, -batch-update and -batch-upsert. */
export const parseBatchItems = (family: Family, body: Record<string, unknown>) => ({ items: parseList(family, body, 'items') });

/** `{ ids }` of -batch-delete and -batch-get. */
export const parseBatchIds = (family: Family, body: Record<string, unknown>) => ({ ids: parseList(family, body, 'ids') });
