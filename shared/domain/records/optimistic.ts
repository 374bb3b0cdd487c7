/**
 * A record's partial update with optimistic locking, decided here and stored by the data layer,
 * each step one call of the record store's functions (shared/db/record-store.ts): read the record
 * with the account's META item (`readForUpdate`), decide the change, plan it (`prepareUpdate`:
 * the new image and its requests, pure), write it (`writeUpdate`).
 * When the write loses a race (the record changed since the read), read and decide again after a
 * back-off; the lost attempt's sort-ordered entries are withdrawn by the next read. Concurrent
 * updates of different fields all survive. Deletes likewise. The data layer never calls back
 * into the domain.
 */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import {
  type Change,
  type LostRace,
  prepareUpdate,
  readForUpdate,
  type RecordModel,
  type UpdateRead,
  withdrawLostRace,
  WriteConflict,
  writeDelete,
  writeUpdate,
} from '../../db/record-store.js';
import type { Actor } from '../../schemas/events.js';
import { backoff } from '../../backoff.js';

/**
 * Lost races are tried again after a full-jitter back-off (2 ms doubling to a 250 ms ceiling):
 * 20 concurrent writers of one record all land within a few hundred ms. The bound is far above
 * what contention on one record reaches in practice.
 */
const MAX_CONFLICT_RETRIES = 40;

export interface OptimisticUpdate {
  accountId: string;
  id: string;
  /** Decides the change from the record as read; may throw an ApiError. Runs again after a lost race. */
  decide: (current: StoredRecord) => Promise<Change | undefined> | Change | undefined;
  /** More items for the same transaction (condition checks, metadata), from the record as read and as it will be (`read`: all the read). */
  extra?: (current: StoredRecord, next: StoredRecord, read: UpdateRead) => TransactItem[];
  /** The write's time (updated_at); default now. */
  now?: string;
  /** Who writes it (stored as `actor` with every effective change). */
  actor?: Actor;
}

/** Runs `attempt` again after a back-off while it loses races, up to MAX_CONFLICT_RETRIES times. */
async function retrying<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof WriteConflict) || i >= MAX_CONFLICT_RETRIES) throw error;
      await backoff(i, 2, 250);
    }
  }
}

/**
 * Deletes a record with optimistic locking: read, decide the items of the same transaction from
 * the record as read (`extra`: its trash item, name override …), delete; again after a lost race.
 * The record as it was, or undefined when it does not exist.
 */
export async function deleteOptimistic(model: RecordModel, args: { accountId: string; id: string; extra?: (current: StoredRecord) => TransactItem[]; actor?: Actor }): Promise<StoredRecord | undefined> {
  return retrying(async () => {
    const read = await readForUpdate(model, args.accountId, args.id);
    return read && writeDelete(model, args.accountId, read, args.extra?.(read.current) ?? [], args.actor);
  });
}

/**
 * The record as written (as read when nothing changed) and the account's META item as read with
 * it (`meta`: the API view needs nothing else), or undefined when the record does not exist.
 */
export async function updateOptimistic(model: RecordModel, args: OptimisticUpdate): Promise<{ record: StoredRecord; meta: UpdateRead['meta'] } | undefined> {
  let lost: LostRace | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      const read = await readForUpdate(model, args.accountId, args.id, lost);
      lost = undefined;
      if (!read) return undefined;
      const plan = prepareUpdate(model, args.accountId, read, await args.decide(read.current), args.now ?? new Date().toISOString(), args.actor);
      if (!plan) return { record: read.current, meta: read.meta };
      try {
        return { record: await writeUpdate(model, plan, args.extra?.(read.current, plan.next, read)), meta: read.meta };
      } catch (error) {
        if (!(error instanceof WriteConflict)) throw error;
        lost = error.lost;
        if (attempt >= MAX_CONFLICT_RETRIES) throw error;
      }
      await backoff(attempt, 2, 250);
    }
  } finally {
    // Out of retries, or the re-read failed, after a lost race: that race's entries, against the record as it is now.
    if (lost) await withdrawLostRace(model, args.accountId, args.id, lost);
  }
}
