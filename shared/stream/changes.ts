/**
 * The per-account work of record changes (the changes worker, functions/stream/changes.ts): the
 * change log's appends first (in the given order, per account), then each item's changes in
 * order (search entries, fan-out, cascades, webhook deliveries), different items in parallel.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { memberRenameOf, type RecordChange, stageChangeOf, toRecordChange } from '../domain/record-change.js';
import { countChanges } from '../domain/summaries.js';
import type { WebhookPayload } from '../schemas/webhooks.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../webhooks/pipeline.js';
import { logChanges } from './change-log.js';
import { FairSlots } from '../fair-slots.js';
import { applyProjections, fanOutReference } from './fanout.js';

/** How many items' changes one batch works on at once (within the process's slots). */
const PARALLEL_ITEMS = 16;
/** How many items this process works on at once, every batch together. */
const PROCESS_ITEMS = 8;
/** How many of them one account may hold while another account is served (its items, every batch of it together). */
const PER_ACCOUNT_ITEMS = 4;
/** How long after another account's last change an account stays at that share (a quiet account writing every few seconds keeps the busy one at it). */
const SHARE_KEPT_MS = 10_000;
/**
 * The process's item slots, shared in turn between accounts, an account kept to
 * `PER_ACCOUNT_ITEMS` while another is served: locally every write goes to one DynamoDB Local,
 * which serves its requests in arrival order, so a quiet account's write waits behind every write
 * a busy one has in flight (docs/performance.md, "Fairness"; 16 slots let a quiet account's first
 * change after a bulk wait behind 16 of the busy one's items: 2.6 s against 2.0 s with 8). Deployed,
 * each Lambda instance holds one batch of one or a few accounts.
 */
const slots = new FairSlots(PROCESS_ITEMS, PER_ACCOUNT_ITEMS, SHARE_KEPT_MS);

/** Where the worker's failures are logged (the handler's logger: shared/stream sits below shared/http). */
export type ErrorLog = (message: string, details: Record<string, unknown>) => void;

/**
 * A batch's time: no item is started after `startBy`, and nothing is awaited after `giveUpAt`
 * (epoch ms). What is not done by then is reported failed, visibly, and retried: a stuck call
 * or slot holds the account's group for one bounded attempt, never for good.
 */
export interface ChangesDeadline {
  startBy: number;
  giveUpAt: number;
}

/** The deadline of a batch that must be answered within `remainingMs` (the function's remaining time). */
export function changesDeadline(remainingMs: number, now = Date.now()): ChangesDeadline {
  // Leave time to answer and report; start no item in the last third (an item's own work is bounded by its calls' time-outs).
  const giveUpAt = now + Math.max(1_000, remainingMs - 5_000);
  return { startBy: now + Math.max(500, (remainingMs - 5_000) * (2 / 3)), giveUpAt };
}

/** Resolves true when `p` settles by `at`, false otherwise (p's own outcome is the caller's). */
async function settlesBy(p: Promise<unknown>, at: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, at - Date.now()))));
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Applies the changes of `records` (stream order). Returns the index of the earliest record that
 * failed or was not done by the deadline (it and everything after it must be redone: what is
 * redone is idempotent, the log appends an event id once), else undefined.
 */
export async function applyChanges(records: readonly DynamoDBRecord[], group: string, logError: ErrorLog, deadline: ChangesDeadline = changesDeadline(DEFAULT_REMAINING_MS)): Promise<number | undefined> {
  const webhooks = new WebhookBatchCache();
  const changes = records.map((record) => toRecordChange(record));
  let payloads: Map<string, WebhookPayload> | undefined;
  const log = logChanges(changes.flatMap((c) => (c ? [c, stageChangeOf(c)] : [])).filter((c): c is RecordChange => c !== undefined), webhooks).then((p) => (payloads = p));
  // The project summary counters (contract §21), beside the log: every change's delta, counted once (its marker).
  const counted = countChanges(changes);
  counted.catch(() => undefined); // handled below (a failed log returns before it is awaited)
  for (const [step, p] of [['the change log append', log], ['the summary counters', counted]] as const) {
    try {
      if (!(await settlesBy(p, deadline.giveUpAt))) {
        logError('changes batch passed its time limit', { group, waitingOn: step, records: records.length });
        return records.length ? 0 : undefined;
      }
      await p;
    } catch (error) {
      logError(step === 'the change log append' ? 'change log append failed' : 'summary counters failed', { error });
      return records.length ? 0 : undefined;
    }
  }
  const byItem = new Map<string, number[]>();
  records.forEach((record, i) => {
    const key = JSON.stringify(record.dynamodb?.Keys ?? i);
    byItem.set(key, [...(byItem.get(key) ?? []), i]);
  });
  const queues = [...byItem.values()];
  const done = new Array<boolean>(records.length).fill(false);
  /** What each worker is doing now (for the time-limit line). */
  const doing = new Map<number, { step: string; eventId?: string; since: number }>();
  let firstFailed = Infinity;
  let next = 0;
  const work = Promise.all(
    Array.from({ length: Math.min(PARALLEL_ITEMS, queues.length) }, async (_, worker) => {
      while (next < queues.length && Date.now() < deadline.startBy) {
        const queue = queues[next++]!;
        doing.set(worker, { step: 'a slot', since: Date.now() });
        let release: () => void;
        try {
          release = await slots.acquire(group, Math.max(0, deadline.giveUpAt - Date.now()));
        } catch {
          break; // SlotTimeout: the batch is past its time; what is not done is retried
        }
        try {
          for (const i of queue) {
            if (i > firstFailed) break;
            const change = changes[i];
            // A member's rename (contract §20): no event; its owners' and assignees' names follow.
            const renamed = change ? undefined : memberRenameOf(records[i]!);
            if (renamed) {
              try {
                doing.set(worker, { step: 'a member rename\'s fan-out', eventId: records[i]!.eventID, since: Date.now() });
                await fanOutReference('member', renamed.accountId, renamed.id, 'renamed');
              } catch (error) {
                logError('stream record failed', { eventId: records[i]!.eventID, error });
                firstFailed = Math.min(firstFailed, i);
                break;
              }
            }
            if (change) {
              try {
                doing.set(worker, { step: 'projections', eventId: records[i]!.eventID, since: Date.now() });
                await applyProjections(change);
                doing.set(worker, { step: 'webhook deliveries', eventId: records[i]!.eventID, since: Date.now() });
                await enqueueWebhookDeliveries(change, webhooks, undefined, payloads!.get(change.eventId));
                const stage = stageChangeOf(change);
                if (stage) await enqueueWebhookDeliveries(stage, webhooks, undefined, payloads!.get(stage.eventId));
              } catch (error) {
                logError('stream record failed', { eventId: records[i]!.eventID, error });
                firstFailed = Math.min(firstFailed, i);
                break;
              }
            }
            done[i] = true;
          }
        } finally {
          doing.delete(worker);
          release();
        }
      }
    }),
  );
  if (!(await settlesBy(work, deadline.giveUpAt))) {
    const now = Date.now();
    const waitingOn = [...doing.values()].sort((a, b) => a.since - b.since).map((d) => `${d.step}${d.eventId ? ` of ${d.eventId}` : ''} for ${now - d.since} ms`);
    logError('changes batch passed its time limit', { group, waitingOn, slots: slots.state, done: done.filter(Boolean).length, records: records.length });
  }
  const notDone = done.indexOf(false);
  const first = Math.min(firstFailed, notDone === -1 ? Infinity : notDone);
  return first === Infinity ? undefined : first;
}

/** A batch's time when the caller gives none (the changes function's time-out, functions/topology.ts, is longer). */
const DEFAULT_REMAINING_MS = 60_000;
