import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { handleChangesBatch } from '../../shared/stream/changes-queue.js';
import { changesDeadline } from '../../shared/stream/changes.js';

/** The changes worker: one account's record changes per message group of the FIFO changes queue (shared/stream/changes-queue.ts). */
export const handler = instrumented('changes', async (event: SQSEvent, context): Promise<SQSBatchResponse> =>
  handleChangesBatch(event.Records, (message, details) => logger.error(message, details), context.getRemainingTimeInMillis ? changesDeadline(context.getRemainingTimeInMillis()) : undefined),
);
