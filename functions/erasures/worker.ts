import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ErasureLeaseHeld, type ErasureWorkerDeps, runErasure } from '../../shared/erasures/worker.js';
import { parseErasureMessage } from '../../shared/erasures/storage.js';
import { logger } from '../../shared/http/logger.js';

/** The erasure worker (SQS, batch size 1, ReportBatchItemFailures): a failure leaves the message; the erasure resumes at its saved step. */
export const erasureHandler =
  (deps: ErasureWorkerDeps = {}) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    for (const record of event.Records) {
      const message = parseErasureMessage(record.body);
      if (!message) {
        logger.error('malformed erasure message dropped', { messageId: record.messageId });
        continue;
      }
      try {
        await runErasure(message, deps);
      } catch (error) {
        if (error instanceof ErasureLeaseHeld) logger.info('erasure is being worked on elsewhere; message returns later', { erasureId: message.erasure_id });
        else logger.error('erasure message failed', { erasureId: message.erasure_id, error: error as Error });
        failed.push(record.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

/**
 * Local mode's crash drill (test/integration/erasure-crash.test.ts): with
 * `CRM_ERASURE_HOLD_AT=<step>` the worker logs `erasure held` once that step's work is done and
 * waits there, its end not saved, until the process is killed. Ignored outside local mode.
 */
const holdAt = (step: string): Promise<void> | undefined => {
  if (process.env.CRM_LOCAL !== 'true' || !process.env.CRM_ERASURE_HOLD_AT || process.env.CRM_ERASURE_HOLD_AT !== step) return undefined;
  logger.warn('erasure held', { step });
  return new Promise<void>(() => undefined);
};

export const handler = erasureHandler({ beforeSave: holdAt });
