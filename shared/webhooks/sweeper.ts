import { abandonDelivery, countSweep, type DeliveryRef, dueDeliveries, hourBucket, readSweepMark, refOf, writeSweepMark } from '../db/webhooks.js';
import { MAX_SWEEPS, sweepGraceSeconds } from './config.js';
import { enqueueDeliveries } from './queue.js';

/**
 * The delivery sweeper: no delivery stays `pending` forever. A pending delivery normally has a
 * queue message that brings it to the worker; the message is gone when local mode restarts
 * (its in-process queue starts empty) or when it went to the dead-letter queue deployed. The
 * sweeper finds such deliveries and enqueues them again; the worker then carries them out (or
 * fails them: deleted or disabled endpoint, last attempt).
 *
 * It reads only DUE deliveries: every pending delivery carries a sparse GSI1 entry in the
 * partition `WHDUE#<hour of its due time>#<shard>`, sorted by due time (shared/db/webhooks.ts),
 * so a sweep queries the hour buckets from its watermark up to now, each up to
 * `now - grace`. The watermark (a SYSTEM item) is the oldest bucket in which the last sweep
 * still found a due delivery; a sweep always also looks LOOKBACK_MS back. Deliveries are due
 * no earlier than their write time, so nothing lands behind that window.
 *
 * A delivery is re-enqueued at most once per RESWEEP_GRACES grace periods (20 minutes deployed),
 * so a backlogged queue is not flooded with duplicates; one re-enqueued MAX_SWEEPS times without
 * any attempt being recorded since (its messages keep getting lost, or the worker keeps crashing
 * on it: over three hours deployed) ends `failed`.
 */

const HOUR_MS = 3_600_000;
/** A delivery is re-enqueued again at the earliest this many grace periods after the last sweep that did. */
export const RESWEEP_GRACES = 10;
/** How far behind the watermark a sweep always looks (clock skew between writers). */
export const LOOKBACK_MS = 2 * HOUR_MS;
/** Deliveries expire after 30 days: no sweep looks further back. */
const MAX_AGE_MS = 31 * 24 * HOUR_MS;

export interface SweepOptions {
  now?: Date;
  /** Only deliveries overdue by this much are re-enqueued (default WEBHOOK_SWEEP_GRACE_SECONDS). */
  graceSeconds?: number;
  enqueue?: (refs: DeliveryRef[]) => Promise<void>;
}

export interface SweepResult {
  /** Hour buckets queried (× shards = queries). */
  buckets: number;
  enqueued: number;
  failed: number;
}

const bucketsBetween = (from: string, to: string): string[] => {
  const out: string[] = [];
  for (let t = Date.parse(`${from}:00:00.000Z`); t <= Date.parse(`${to}:00:00.000Z`); t += HOUR_MS) out.push(hourBucket(new Date(t).toISOString()));
  return out;
};

export async function sweepDueDeliveries(opts: SweepOptions = {}): Promise<SweepResult> {
  const now = opts.now ?? new Date();
  const enqueue = opts.enqueue ?? ((refs: DeliveryRef[]) => enqueueDeliveries(refs));
  const graceMs = (opts.graceSeconds ?? sweepGraceSeconds()) * 1000;
  const cutoff = new Date(now.getTime() - graceMs).toISOString();
  // A delivery re-enqueued by a sweep is left to that message for a while (a backlogged queue
  // must not be flooded with duplicates, nor its deliveries counted as stalled too soon).
  const resweepGapMs = RESWEEP_GRACES * graceMs;
  const mark = await readSweepMark();
  const floor = hourBucket(new Date(now.getTime() - MAX_AGE_MS).toISOString());
  const lookback = hourBucket(new Date(now.getTime() - LOOKBACK_MS).toISOString());
  const from = mark && mark < lookback ? (mark < floor ? floor : mark) : lookback;
  const buckets = bucketsBetween(from, hourBucket(cutoff));

  const result: SweepResult = { buckets: buckets.length, enqueued: 0, failed: 0 };
  let oldestLeft: string | undefined;
  let batch: DeliveryRef[] = [];
  const flush = async () => {
    if (batch.length) await enqueue(batch);
    result.enqueued += batch.length;
    batch = [];
  };
  for (const bucket of buckets) {
    for await (const delivery of dueDeliveries(bucket, cutoff)) {
      if (delivery.status !== 'pending') continue; // the index is eventually consistent
      const ref = refOf(delivery);
      oldestLeft ??= bucket;
      const sweeps = await countSweep(ref, now.getTime(), resweepGapMs);
      if (sweeps === undefined) continue; // finished meanwhile, or re-enqueued by a recent sweep
      if (sweeps > MAX_SWEEPS) {
        await abandonDelivery(ref, `delivery stalled: re-enqueued ${MAX_SWEEPS} times without an attempt`, now);
        result.failed += 1;
        continue;
      }
      batch.push(ref);
      if (batch.length === 10) await flush();
    }
  }
  await flush();
  const newMark = oldestLeft ?? hourBucket(cutoff);
  if (newMark !== mark) await writeSweepMark(newMark);
  return result;
}
