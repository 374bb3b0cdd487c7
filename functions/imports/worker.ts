import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../shared/http/logger.js';
import { parseImportMessage } from '../../shared/imports/storage.js';
import { type ImportWorkerDeps, LeaseHeld, runImport } from '../../shared/imports/worker.js';

/**
 * The import worker (SQS event source, batch size 1, ReportBatchItemFailures). A message names
 * one job; the worker applies its rows chunk by chunk and, when the invocation runs short of
 * time, continues in a new message. A failure leaves the message in the queue: the job resumes
 * from its last finished chunk. `deps` replaces the worker's settings (tests inject crashes here).
 */
export const importHandler =
  (deps: ImportWorkerDeps = {}) =>
  async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    for (const record of event.Records) {
      const message = parseImportMessage(record.body);
      if (!message) {
        logger.error('malformed import message dropped', { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await runImport(message, { remainingMs: context ? () => context.getRemainingTimeInMillis() : undefined, ...deps });
        logger.debug('import message handled', { importId: message.import_id, outcome });
      } catch (error) {
        if (error instanceof LeaseHeld) logger.info('import is being worked on elsewhere; message returns later', { importId: message.import_id });
        else logger.error('import message failed', { importId: message.import_id, error: error as Error });
        failed.push(record.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = importHandler();
