import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ExportLeaseHeld, type ExportWorkerDeps, runExport } from '../../shared/exports/worker.js';
import { parseExportMessage } from '../../shared/exports/storage.js';
import { logger } from '../../shared/http/logger.js';

/**
 * The export worker (SQS event source, batch size 1, ReportBatchItemFailures). A message names
 * one job; the worker writes its file. A failure leaves the message in the queue: the job starts
 * its file again (shared/exports/worker.ts). `deps` replaces the worker's settings (tests inject crashes).
 */
export const exportHandler =
  (deps: ExportWorkerDeps = {}) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    for (const record of event.Records) {
      const message = parseExportMessage(record.body);
      if (!message) {
        logger.error('malformed export message dropped', { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await runExport(message, deps);
        logger.debug('export message handled', { exportId: message.export_id, outcome });
      } catch (error) {
        if (error instanceof ExportLeaseHeld) logger.info('export is being worked on elsewhere; message returns later', { exportId: message.export_id });
        else logger.error('export message failed', { exportId: message.export_id, error: error as Error });
        failed.push(record.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = exportHandler();
