/** Keys of the account as a whole and of the installation (not of one family). */
import { ACCOUNT, defineKeys, personalFlags } from './define.js';

export const ACCOUNT_KEYS = defineKeys({
  /** Per-account metadata: pending renames/deletions of companies and sources, deleted custom fields. */
  accountMeta: [ACCOUNT, 'META'],
  /** Idempotency records of `*-create` calls, scoped to account and operation. */
  idempotency: ['IDEMP#{account}#{operation}#{key}', 'IDEMP'],
  /**
   * Which idempotency records answered with a record (one entry per record id of a stored
   * contacts answer): an erasure finds the answers that hold the person (contract §18).
   */
  idempotentAnswerOfRecord: [`${ACCOUNT}#idr#{recordId}`, '{operation}#{key}'],
  idempotentAnswerOfRecordPartition: `${ACCOUNT}#idr#{recordId}`,
  /** Installation-wide secrets (the cursor signing key). */
  system: ['SYSTEM', '{name}'],
  /**
   * An account's places on a job queue (imports, exports, erasures, index builds): at most the
   * queue's per-account cap of them, each held by one job until `until` (shared/http/job-handler.ts).
   */
  jobPlace: [`${ACCOUNT}#jp#{queue}`, '{place}'],
  /** A job of the account waiting for one of its places on a queue: the next place given back wakes it. */
  jobWaiting: [`${ACCOUNT}#jp#{queue}`, 'w#{job}'],
});

/** Attribute names of the per-account META item (see shared/db/meta.ts). */
export const ACCOUNT_META_ATTRIBUTES = defineKeys({
  /** A pending rename (`name`) or deletion (`name: null`) of a referenced record, or a rename of a member (`referenced`: an entity type or `member`). */
  override: 'o#{referenced}#{id}',
  /** Ids of deleted custom-field definitions. */
  deletedFields: 'df',
  /** Number of custom-field definitions of an entity type. */
  definitionCount: 'cf_count_{entityType}',
  /**
   * A custom field whose sort-ordered entries writes keep (contract §17 `indexed`, or being
   * removed): its §17 type, by definition id.
   */
  indexedField: 'ix#{id}',
  /** The ids of an entity type's indexed custom fields (a string set): what the limit of indexed fields counts. */
  indexedSet: 'ix_set_{entityType}',
});

/** Record data in the account's items (contract §18): a stored idempotent answer holds the record it created. */
export const ACCOUNT_PERSONAL = /* @__PURE__ */ personalFlags(ACCOUNT_KEYS, { accountMeta: false, idempotency: true, idempotentAnswerOfRecord: false, system: false, jobPlace: false, jobWaiting: false });
