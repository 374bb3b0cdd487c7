import type { AccountMeta } from '../db/meta.js';

/** Custom field values without those of deleted definitions. */
export function visibleCustomFields(value: unknown, meta: AccountMeta | undefined): Record<string, unknown> {
  const cf = (value ?? {}) as Record<string, unknown>;
  if (!meta || meta.deletedFields.size === 0) return { ...cf };
  return Object.fromEntries(Object.entries(cf).filter(([k]) => !meta.deletedFields.has(k)));
}
