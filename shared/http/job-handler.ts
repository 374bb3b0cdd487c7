import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { claimJobPlace, releaseJobPlace } from '../db/job-places.js';
import { LeaseHeld } from '../db/job-lease.js';
import { logger } from './logger.js';

type Remaining = Pick<Context, 'getRemainingTimeInMillis'>;

export interface JobQueueHandler<M> {
  /** The job's name in log lines ("export", "index build"). */
  job: string;
  /** Reads a message (undefined: malformed, dropped rather than retried). */
  parse: (body: string) => M | undefined;
  /** The job's id for log lines, under its key (`{ exportId }`). */
  logKeys: (message: M) => Record<string, string>;
  /** Works on the job; `context` is the invocation's, when Lambda gave one. */
  run: (message: M, context?: Remaining) => Promise<unknown>;
  /** Fairness between accounts (see JobFairness). */
  fair?: JobFairness<M>;
}

/**
 * Fairness between accounts on a job queue: one account's jobs hold at most `perAccount` of the
 * queue's workers at once, below the queue's concurrency (test/unit/job-fairness.test.ts), so one
 * busy account leaves the other workers to other accounts (a share, not a reservation: several
 * busy accounts together can still hold them all). Before it runs, a job takes one of its
 * account's places on the queue (`claimJobPlace`, shared/db/job-places.ts: a few items per account,
 * whatever its number of queued jobs), and gives it back once it no longer runs. When all are
 * held by the account's other jobs, it is noted as waiting and its message is sent again after
 * DEFER_SECONDS (`defer`); a job that gives its place back wakes one waiting job of its account at
 * once (`wake`: its message sent again without delay), so a freed place does not idle until a
 * put-back message comes back. The put-back message stays: it runs the job if the wake is lost
 * (a duplicate finds the job running or ended).
 */
export interface JobFairness<M> {
  /** The queue's name in its places' keys. */
  queue: string;
  perAccount: number;
  /** The message's account and job. */
  of: (message: M) => { accountId: string; jobId: string };
  defer: (message: M, delaySeconds: number) => Promise<void>;
  /** Sends a job's message again at once (a waiting job, woken for a place given back). */
  wake: (accountId: string, jobId: string) => Promise<void>;
}

/** How long a job put back by its account's cap waits before its message is delivered again. */
export const DEFER_SECONDS = 5;
/** How long a place is held at most: Lambda's longest invocation and a minute (a worker that died frees it then). */
const PLACE_HELD_MS = 16 * 60_000;

/**
 * The worker of a job queue (imports, exports, erasures, index builds: SQS, batch size 1,
 * ReportBatchItemFailures). A message names one job; a failure leaves the message in the queue
 * and the job resumes from its saved position (shared/db/jobs.ts), as does a job whose lease
 * another worker holds (LeaseHeld: the message comes back in case that worker dies); a malformed
 * message is dropped.
 */
export const jobQueueHandler =
  <M>(spec: JobQueueHandler<M>) =>
  async (event: SQSEvent, context?: Remaining): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    for (const record of event.Records) {
      const message = spec.parse(record.body);
      if (!message) {
        logger.error(`malformed ${spec.job} message dropped`, { messageId: record.messageId });
        continue;
      }
      const fair = spec.fair;
      /** Gives back the job's place on the queue, once taken. */
      let release: (() => Promise<void>) | undefined;
      let runningElsewhere = false;
      try {
        if (fair) {
          const { accountId, jobId } = fair.of(message);
          const place = await claimJobPlace(accountId, fair.queue, jobId, fair.perAccount, Date.now() + PLACE_HELD_MS);
          if (place === undefined) {
            await fair.defer(message, DEFER_SECONDS);
            logger.debug(`${spec.job} waits: its account already runs ${fair.perAccount} at once`, spec.logKeys(message));
            continue;
          }
          release = async () => {
            const next = await releaseJobPlace(accountId, fair.queue, place, jobId);
            if (next) await fair.wake(accountId, next);
          };
        }
        const outcome = await spec.run(message, context);
        logger.debug(`${spec.job} message handled`, { ...spec.logKeys(message), outcome });
      } catch (error) {
        // Another worker runs the job: its place stays its own.
        runningElsewhere = error instanceof LeaseHeld;
        if (runningElsewhere) logger.info(`${spec.job} is being worked on elsewhere; message returns later`, spec.logKeys(message));
        else logger.error(`${spec.job} message failed`, { ...spec.logKeys(message), error: error as Error });
        failed.push(record.messageId);
      } finally {
        if (release && !runningElsewhere) await release().catch(() => undefined);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
