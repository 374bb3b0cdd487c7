import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { type EntityType, RECORD_SK, TABLE_DEFINITION } from './table.js';

/**
 * What happened to a record. New kinds (restored, merged, …) are added here and in `opOf`; the
 * change log and webhooks pick them up from the entity's events.
 */
export type RecordOp = 'created' | 'updated' | 'deleted';

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
  if (!item || item.sk !== RECORD_SK || typeof entity !== 'string' || typeof item.account_id !== 'string') return undefined;
  const seconds = typeof d.ApproximateCreationDateTime === 'number' ? d.ApproximateCreationDateTime : undefined;
  return {
    eventId: record.eventID ?? `${item.pk}:${d.SequenceNumber}`,
    op: OPS[record.eventName],
    type: entity as EntityType,
    accountId: item.account_id,
    id: String(item.id),
    at: seconds ? new Date(seconds * 1000).toISOString() : new Date().toISOString(),
    old: oldImage,
    new: newImage,
    actor: newImage?.actor,
  };
}
