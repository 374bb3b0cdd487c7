import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../shared/http/logger.js';
import { parseIndexBuildMessage } from '../../shared/indexing/storage.js';
import { IndexBuildLeaseHeld, type IndexBuildWorkerDeps, runIndexBuild } from '../../shared/indexing/worker.js';

/**
 * The index-build worker (SQS, batch size 1, ReportBatchItemFailures): a message names one build
 * of a custom field's sort-ordered entries (contract §17). A failure leaves the message; the
 * build resumes after its last saved page. `deps` replaces the worker's settings (tests stop builds).
 */
export const indexBuildHandler =
  (deps: IndexBuildWorkerDeps = {}) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    for (const record of event.Records) {
      const message = parseIndexBuildMessage(record.body);
      if (!message) {
        logger.error('malformed index build message dropped', { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await runIndexBuild(message, deps);
        logger.debug('index build message handled', { buildId: message.build_id, outcome });
      } catch (error) {
        if (error instanceof IndexBuildLeaseHeld) logger.info('index build is being worked on elsewhere; message returns later', { buildId: message.build_id });
        else logger.error('index build message failed', { buildId: message.build_id, error: error as Error });
        failed.push(record.messageId);
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = indexBuildHandler();
