import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { changesQueueUrl, routeRecords } from '../../shared/stream/route.js';

/**
 * The table's stream consumer: it only routes. A batch's record changes go to the changes queue,
 * one message group per account (shared/stream/route.ts), where the changes worker does the
 * per-account work (functions/stream/changes.ts). On failure the earliest record not sent is
 * reported (ReportBatchItemFailures), so the batch is retried from there.
 */
export const handler = instrumented('stream', async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const failed = await routeRecords(event.Records, changesQueueUrl());
  if (failed === undefined) return { batchItemFailures: [] };
  return { batchItemFailures: [{ itemIdentifier: event.Records[failed]?.dynamodb?.SequenceNumber ?? '' }] };
});
