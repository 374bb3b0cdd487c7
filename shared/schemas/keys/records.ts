/**
 * Keys and index compositions of the record families (companies, contacts, lead sources,
 * projects, activities; trash and merge of contract §15). Every key is composed from the
 * entity's `type`; which fields are indexed, and how, is the entity definition's `filters`,
 * `lookup` and `search` (see shared/db/record-model.ts).
 */
import type { EntityType } from '../entities/index.js';
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const RECORD = `${ACCOUNT}#{type}#{id}`;
const INDEX = `${ACCOUNT}#{type}#x#{name}`;
const TRASH = `${ACCOUNT}#trash#{type}`;
const SORTED = `${ACCOUNT}#{type}#s#{field}`;
const CASCADES = `${ACCOUNT}#{target}#{targetId}`;
const STAGE = `${ACCOUNT}#{type}#g#{stageId}`;

export const RECORD_KEYS = defineKeys({
  /** A record: one item, `sk` R. */
  record: [RECORD, 'R'],
  recordSk: 'R',
  /** GSI1 attributes of a record: the account's list of that type, newest first. */
  recordGsi: { gsi1: [`${ACCOUNT}#{type}`, ORDER] },
  listPartition: `${ACCOUNT}#{type}`,
  /**
   * GSI2 attributes of a record in a pipeline stage (a project's `stage_id`): the stage's records,
   * newest first, on the record items themselves (a sparse index: a record without a stage has none).
   */
  stageGsi: { gsi2: [STAGE, ORDER] },
  stagePartition: STAGE,
  /**
   * An index entry: one small item per (record, indexed value), in a partition per value
   * (`name`: see RECORD_INDEX_NAMES), sorted like the GSI.
   */
  indexPartition: INDEX,
  indexEntry: [INDEX, ORDER],
  /**
   * A sort-ordered index entry (contract §17): one item per (record, sorted field), in a partition
   * per field (`field`: a field name, or `custom_fields.<definition id>`), sorted by the record's
   * value then its list position (`createdAt#id`: `sortedValue`), empty values apart, by position
   * (`sortedEmpty`). Holds the record's `id` and its list position (`pos`).
   */
  sortedPartition: SORTED,
  sortedEntry: [SORTED, '{at}'],
  /**
   * Sort key of a non-empty value (its ordered encoding, shared/schemas/filter.ts `sortKeyOf`);
   * ties by position (`created_at`, then id), so one value's entries are in the list's own order.
   */
  sortedValue: 'v{value}\u0001{position}',
  /** Sort key of an empty value: after every value in both directions; by position. */
  sortedEmpty: 'z\u0001{position}',
  /** Bounds of the non-empty section and of any value's entries (`sortedValue` of a prefix). */
  sortedValuesFrom: 'v',
  sortedValueOf: 'v{value}',
  sortedEmptyFrom: 'z',
  /** The highest code point: an upper bound after every key beginning with the same prefix. */
  sortedTop: '\u{10FFFF}',
  /** The sampled size of an index partition (search prefixes): one counter item beside it. */
  partitionCount: [`${ACCOUNT}#{type}#n#{name}`, 'N'],
  /** Sort value of the GSI and of index entries. */
  order: ORDER,
  /**
   * Who deleted a record (its `*.deleted` event's actor): written in the deletion's transaction
   * beside the record item, read by the stream worker; expires after a day.
   */
  recordDeletion: [RECORD, 'D'],
  /**
   * A trashed record (sk `T`, beside where the record was): its last stored image, `deleted_at`,
   * `purge_at` and `ttl`. GSI1 lists the account's trash of one type, most recently deleted first.
   */
  trash: [RECORD, 'T'],
  trashGsi: { gsi1: [TRASH, '{deletedAt}#{id}'] },
  trashPartition: TRASH,
  /**
   * What a deletion's cascade changed on one referencing record (in the deleted record's
   * partition): the value the cascade wrote, so a restore re-links only where it is still that value.
   */
  cascadeLog: [CASCADES, 'C#{type}#{id}#{field}'],
  cascadeLogPartition: CASCADES,
  cascadeLogPrefix: 'C#',
  /**
   * A merge (sk `M`, in the secondary's partition): the primary's image after the merge and the
   * progress of the re-pointing of the secondary's links; its stream records are merges.
   */
  merge: [`${ACCOUNT}#{type}#{secondaryId}`, 'M'],
  mergeSk: 'M',
  /**
   * The upsert claim of a lookup key (contract §13: upserts are atomic per key), one per account,
   * type and key (`digest`: a hash of the normalized email or domain, so the item holds no
   * address): `{ n, id }`, a counter every create by an upsert moves on in its own transaction
   * (conditioned on the value read before the upsert looked for a match), and the record that
   * create made.
   */
  upsertClaim: [`${ACCOUNT}#uq#{type}#{digest}`, 'U'],
});

/** Names of index partitions (the `name` of `indexEntry`): one partition per indexed value. */
export const RECORD_INDEX_NAMES = defineKeys({
  tag: 't#{tag}',
  /** Records that reference a record (`tag`: REFERENCE_TAGS of its type). */
  ref: '{tag}#{id}',
  /** Exact (normalized) email address of a contact. */
  email: 'e#{email}',
  /** Exact (normalized) domain of a company. */
  domain: 'd#{domain}',
  /** A search prefix. */
  word: 'w#{prefix}',
  /** An enumerated field's value (a project's status, an activity's type, …). */
  value: 'v#{field}#{value}',
});

/**
 * The `tag` of a reference index, by the referenced type (a contact's company: `c#<id>`): every
 * entity type, and `member` (owners and assignees, contract §20: members are not records).
 */
export const REFERENCE_TAGS = { company: 'c', source: 's', contact: 'k', project: 'p', activity: 'a', member: 'm' } as const satisfies Record<EntityType | 'member', string>;

/** What a reference field may point at: a record's entity type, or a member. */
export type ReferenceTarget = keyof typeof REFERENCE_TAGS;

/**
 * Record data (contract §18): the record, its index entries (search prefixes, the email lookup,
 * tags), its trash item and a merge's image of the primary. Who deleted it and what a cascade
 * wrote hold ids only.
 */
export const RECORD_PERSONAL = /* @__PURE__ */ personalFlags(RECORD_KEYS, {
  record: true,
  indexEntry: true,
  sortedEntry: true,
  partitionCount: false,
  recordDeletion: false,
  trash: true,
  cascadeLog: false,
  merge: true,
  upsertClaim: true,
});
