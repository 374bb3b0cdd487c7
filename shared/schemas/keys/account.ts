/** Keys of the account as a whole and of the installation (not of one family). */
import { ACCOUNT, defineKeys } from './define.js';

export const ACCOUNT_KEYS = defineKeys({
  /** Per-account metadata: pending renames/deletions of companies and sources, deleted custom fields. */
  accountMeta: [ACCOUNT, 'META'],
  /** Idempotency records of `*-create` calls, scoped to account and operation. */
  idempotency: ['IDEMP#{account}#{operation}#{key}', 'IDEMP'],
  /** Installation-wide secrets (the cursor signing key). */
  system: ['SYSTEM', '{name}'],
});

/** Attribute names of the per-account META item (see shared/db/meta.ts). */
export const ACCOUNT_META_ATTRIBUTES = defineKeys({
  /** A pending rename (`name`) or deletion (`name: null`) of a referenced record. */
  override: 'o#{type}#{id}',
  /** Ids of deleted custom-field definitions. */
  deletedFields: 'df',
  /** Number of custom-field definitions of an entity type. */
  definitionCount: 'cf_count_{entityType}',
});
