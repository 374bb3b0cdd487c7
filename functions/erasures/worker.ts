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

export const handler = erasureHandler();
