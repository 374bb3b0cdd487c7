import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { type EntityType, MERGE_SK, RECORD_SK, RESTORED_ATTR, TABLE_DEFINITION } from './table.js';

/**
 * What happened to a record. New kinds (restored, merged, …) are added here and in `opOf`; the
 * change log and webhooks pick them up from the entity's events.
 */
export type RecordOp =
  | 'created'
  | 'updated'
  | 'deleted'
  /** A record put back from the trash (contract §15): its insert carries `rst`. */
  | 'restored'
  /** A merge (the merge item's insert): `id` and `new` are the primary, `mergedId` the secondary. */
  | 'merged'
  /** A merge's progress moved (the merge item's update): the next chunk of re-pointing; no event. */
  | 'merging'
  /** A person erased (contract §18): raised by the erasure itself (shared/erasures/worker.ts), never read from the stream. */
  | 'erased';

/** A change of one record (contact, company, source) read from the table's stream. */
export interface RecordChange {
  /** The stream record's id: stable across replays of the same batch. The event id of webhooks and the change log. */
  eventId: string;
  op: RecordOp;
  type: EntityType;
  accountId: string;
  id: string;
  /** When the change happened (the stream's approximate creation time, else now). */
  at: string;
  old?: Record<string, unknown>;
  new?: Record<string, unknown>;
  /**
   * Who made the change (the `actor` the write stored on the record item; a deletion's is kept
   * beside it: shared/db/events.ts `readDeletionActor`). Undefined until known.
   */
  actor?: unknown;
  /** `merged`/`merging`: the secondary record's id. */
  mergedId?: string;
}

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
