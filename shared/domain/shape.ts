import type { AccountMeta } from '../db/meta.js';

/** Picks exactly the resource's fields, in order, with the contract's defaults for unset ones. */
export function shape<F extends readonly string[]>(fields: F, defaults: Record<string, unknown>, item: Record<string, unknown>) {
  return Object.fromEntries(
    fields.map((f) => [f, item[f] !== undefined ? item[f] : f in defaults ? defaults[f] : '']),
  ) as Record<F[number], unknown>;
}

/** Custom field values without those of deleted definitions. */
export function visibleCustomFields(value: unknown, meta: AccountMeta | undefined): Record<string, unknown> {
  const cf = (value ?? {}) as Record<string, unknown>;
  if (!meta || meta.deletedFields.size === 0) return { ...cf };
  return Object.fromEntries(Object.entries(cf).filter(([k]) => !meta.deletedFields.has(k)));
}

/** A new record's writable fields, every one at its contract default ("" / null / [] / {}). */
export function defaultFields(fields: readonly string[], defaults: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, account_id: _a, created_by: _c, created_at: _ca, updated_at: _u, ...rest } = shape(fields, defaults, {});
  return rest;
}
