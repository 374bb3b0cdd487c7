import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { eq, update } from './expr.js';
import { batchGetItems, type StoredRecord, type TransactItem, writeUnlessRefused } from './items.js';
import { type EntityType, keys, metaAttr, type ReferenceTarget } from './table.js';
import type { FieldType } from '../schemas/filter.js';

/**
 * Per-account metadata item. It makes derived data current at once while the stream worker
 * catches up in the background:
 * - `o#company#<id>` / `o#source#<id>` / `o#member#<id>`: a rename (`name`) or deletion (`name: null`) whose
 *   fan-out to contacts is still running; reads apply it, the fan-out removes it when done.
 * - `df`: ids of deleted custom-field definitions; reads hide their values.
 * - `cf_count_<entity>`: number of custom-field definitions (at most 200 per entity type).
 */
/** A referenced entity type (or `member`: renames of owners, contract §20) whose renames and deletions are applied on read while they fan out. */
export type RefKind = ReferenceTarget;

export interface AccountMeta {
  /** `to`: a merged record (contract §15) shows as the record it was merged into until its links have moved. */
  overrides: Map<string, { name: string | null; v: number; to?: string }>;
  deletedFields: Set<string>;
  /**
   * The custom fields whose sort-ordered entries writes keep (contract §17 `indexed`, or being
   * removed), with their §17 types, by definition id: the `ix#<id>` attributes (a backfill starts
   * after its field was added here).
   */
  indexed: Record<string, FieldType>;
}

export const overrideAttr = metaAttr.override;

/** The account's META item, strongly consistent. */
export async function readMeta(accountId: string): Promise<AccountMeta> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.accountMeta(accountId), ConsistentRead: true }));
  return metaFromItem(out.Item);
}

/** The account's indexed custom fields (`AccountMeta.indexed`), strongly consistent. */
export const readIndexedCustom = async (accountId: string): Promise<Record<string, FieldType>> => (await readMeta(accountId)).indexed;

function metaFromItem(item: Record<string, unknown> = {}): AccountMeta {
  const overrides = new Map<string, { name: string | null; v: number; to?: string }>();
  const indexed: Record<string, FieldType> = {};
  for (const [k, v] of Object.entries(item)) {
    if (metaAttr.isOverride(k)) overrides.set(k, v as { name: string | null; v: number; to?: string });
    const id = metaAttr.indexedFieldId(k);
    if (id !== undefined) indexed[id] = v as FieldType;
  }
  return { overrides, deletedFields: new Set((item[metaAttr.deletedFields] as Set<string> | undefined) ?? []), indexed };
}

/**
 * A record and its account's metadata in one strongly consistent round trip (what every
 * single-record read needs, and an update's read: shared/db/writes.ts `readForUpdate`).
 */
export async function readRecordWithMeta(type: EntityType, accountId: string, id: string): Promise<{ record: StoredRecord | undefined; meta: AccountMeta }> {
  const recordKey = keys.record(accountId, type, id);
  const metaKey = keys.accountMeta(accountId);
  const found = await batchGetItems([recordKey, metaKey], { consistent: true });
  const record = found.find((i) => i.pk === recordKey.pk && i.sk === recordKey.sk) as StoredRecord | undefined;
  return { record, meta: metaFromItem(found.find((i) => i.pk === metaKey.pk && i.sk === metaKey.sk)) };
}

/** Applies a pending rename/deletion to a reference (company_id + company_name, …). */
export function currentRef(meta: AccountMeta, kind: RefKind, id: unknown, storedName: unknown): { id: string | null; name: string } {
  if (typeof id !== 'string' || id === '') return { id: null, name: '' };
  const o = meta.overrides.get(overrideAttr(kind, id));
  if (!o) return { id, name: String(storedName ?? '') };
  if (o.name === null) return { id: null, name: '' };
  return { id: typeof o.to === 'string' ? o.to : id, name: o.name };
}

export function setOverrideItem(accountId: string, kind: RefKind, id: string, name: string | null, v: number, to?: string): TransactItem {
  return { Update: { TableName: tableName(), Key: keys.accountMeta(accountId), ...update({ set: [[overrideAttr(kind, id), { name, v, ...(to ? { to } : {}) }]] }) } };
}

/** Called by the fan-out when every contact carries the change; a newer change keeps its entry. */
export async function clearOverride(accountId: string, kind: RefKind, id: string, v: number): Promise<void> {
  const attr = overrideAttr(kind, id);
  await writeUnlessRefused({ Update: { TableName: tableName(), Key: keys.accountMeta(accountId), ...update({ remove: [attr] }, eq([attr, 'v'], v)) } });
}
