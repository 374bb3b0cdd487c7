/**
 * The change of a record, as the stream's readers see it (a stream record is read as one by
 * shared/domain/record-change.ts).
 */
import type { EntityType } from './table.js';

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
  | 'erased'
  /** A record's pipeline stage changed (contract §19): a second change of the same stream record (`stageChangeOf`). */
  | 'stage_changed';

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
