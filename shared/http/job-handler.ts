import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
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
  /** What `run` throws when another worker holds the job's lease: the message comes back later. */
  leaseHeld: abstract new (...args: never[]) => Error;
  /**
   * Fairness between accounts: at most `perAccount` jobs of one account run at once, below the
   * queue's concurrency (checked in test/unit/job-fairness.test.ts), so another account's job
   * always finds a free worker. A message whose account already has that many jobs held by
   * workers (`held`: the others, not this one) is sent again after DEFER_SECONDS (`defer`).
   */
  fair?: { perAccount: number; held: (message: M) => Promise<number>; defer: (message: M, delaySeconds: number) => Promise<void> };
}

/** How long a job put back by its account's cap waits before its message is delivered again. */
export const DEFER_SECONDS = 5;

/**
 * The worker of a job queue (imports, exports, erasures, index builds: SQS, batch size 1,
 * ReportBatchItemFailures). A message names one job; a failure leaves the message in the queue
 * and the job resumes from its saved position (shared/db/jobs.ts); a malformed message is dropped.
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
      try {
        if (spec.fair && (await spec.fair.held(message)) >= spec.fair.perAccount) {
          await spec.fair.defer(message, DEFER_SECONDS);
          logger.info(`${spec.job} waits: its account already runs ${spec.fair.perAccount} at once`, spec.logKeys(message));
          continue;
        }
        const outcome = await spec.run(message, context);
        logger.debug(`${spec.job} message handled`, { ...spec.logKeys(message), outcome });
      } catch (error) {
        if (error instanceof spec.leaseHeld) logger.info(`${spec.job} is being worked on elsewhere; message returns later`, spec.logKeys(message));
        else logger.error(`${spec.job} message failed`, { ...spec.logKeys(message), error: error as Error });
        failed.push(record.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
