/**
 * Stream records decoded (contract §12): a table stream record (Lambda's DynamoDB event record,
 * images in attribute-value form) read as the change of one record, or of a merge, that the
 * stream's router (shared/stream/route.ts) and the changes worker (shared/stream/changes.ts) act
 * on. Reading an image is knowing the table's items (their sort keys, the entity attribute), so
 * it lives in the domain, the workers' way to the data layer. Items that are not records (search
 * entries, deliveries, …) are no change. Pure: no call.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { RecordChange, RecordOp } from '../db/changes.js';
import { type EntityType, keys, MERGE_SK, RECORD_SK, RESTORED_ATTR, TABLE_DEFINITION } from '../db/table.js';

export type { RecordChange } from '../db/changes.js';

const OPS: Record<'INSERT' | 'MODIFY' | 'REMOVE', RecordOp> = { INSERT: 'created', MODIFY: 'updated', REMOVE: 'deleted' };

/** Turns a stream record into a RecordChange; undefined for items that are not records. */
export function toRecordChange(record: DynamoDBRecord): RecordChange | undefined {
  const d = record.dynamodb;
  if (!d || !record.eventName) return undefined;
  const image = (x: unknown) => (x ? unmarshall(x as Record<string, AttributeValue>) : undefined);
  const newImage = image(d.NewImage);
  const oldImage = image(d.OldImage);
  const item = newImage ?? oldImage;
  const entity = item?.[TABLE_DEFINITION.entityTypeAttribute];
  if (!item || typeof entity !== 'string' || typeof item.account_id !== 'string') return undefined;
  const seconds = typeof d.ApproximateCreationDateTime === 'number' ? d.ApproximateCreationDateTime : undefined;
  const at = seconds ? new Date(seconds * 1000).toISOString() : new Date().toISOString();
  if (item.sk === MERGE_SK) {
    // A merge item: its insert is the merge, its updates the re-pointing's next chunks, its removal (TTL) nothing.
    if (!newImage || record.eventName === 'REMOVE') return undefined;
    const primary = newImage.record as Record<string, unknown>;
    return {
      eventId: record.eventID ?? `${item.pk}:${d.SequenceNumber}`,
      op: record.eventName === 'INSERT' ? 'merged' : 'merging',
      type: entity as EntityType,
      accountId: item.account_id,
      id: String(newImage.primary_id),
      at,
      new: primary,
      actor: newImage.actor,
      mergedId: String(newImage.secondary_id),
    };
  }
  if (item.sk !== RECORD_SK) return undefined;
  const restored = record.eventName === 'INSERT' && newImage?.[RESTORED_ATTR] !== undefined;
  return {
    eventId: record.eventID ?? `${item.pk}:${d.SequenceNumber}`,
    op: restored ? 'restored' : OPS[record.eventName],
    type: entity as EntityType,
    accountId: item.account_id,
    id: String(item.id),
    at,
    old: oldImage,
    new: newImage,
    actor: newImage?.actor,
  };
}

/**
 * The stage change a record change also is (contract §19: `project.stage_changed` beside
 * `project.updated`), with an event id of its own derived from the change's; undefined when the
 * write did not change the record's pipeline or stage (entering one, moving, leaving).
 */
export function stageChangeOf(change: RecordChange | undefined): RecordChange | undefined {
  if (!change || !change.new || !['created', 'updated', 'restored'].includes(change.op)) return undefined;
  const place = (r: Record<string, unknown> | undefined) => `${String(r?.pipeline_id ?? null)}/${String(r?.stage_id ?? null)}`;
  return place(change.old) !== place(change.new) ? { ...change, eventId: `${change.eventId}:stage`, op: 'stage_changed' } : undefined;
}

/** A member renamed (contract §20): the records it owns or is assigned to show its new name. */
export interface MemberRename {
  accountId: string;
  id: string;
}

/**
 * The rename a stream record is when it is the update of a member item (`keys.member`; not its
 * name entry, a copy) whose name changed; undefined otherwise. Reads the raw images: no decoding
 * of the many records that are no member.
 */
export function memberRenameOf(record: DynamoDBRecord): MemberRename | undefined {
  const d = record.dynamodb;
  if (record.eventName !== 'MODIFY' || !d?.NewImage || !d.OldImage) return undefined;
  const str = (image: Record<string, unknown>, attr: string) => (image[attr] as { S?: string } | undefined)?.S;
  const [n, o] = [d.NewImage, d.OldImage] as Record<string, unknown>[];
  const accountId = str(n!, 'account_id');
  const id = str(n!, 'id');
  const name = str(n!, 'name');
  if (!accountId || !id || name === undefined || name === str(o!, 'name')) return undefined;
  const key = keys.member(accountId, id);
  return str(n!, TABLE_DEFINITION.partitionKey) === key.pk && str(n!, TABLE_DEFINITION.sortKey) === key.sk ? { accountId, id } : undefined;
}
