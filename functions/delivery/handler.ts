import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { countMetric, METRIC } from '../../shared/observability/metrics.js';
import { failureLog } from '../../shared/webhooks/failure-log.js';
import { parseDeliveryRef } from '../../shared/webhooks/queue.js';
import { type DeliveryStep, processDelivery, type WorkerDeps } from '../../shared/webhooks/worker.js';

/** Delivery outcome metrics (one EMF line per outcome and invocation). */
const OUTCOME_METRICS: Partial<Record<DeliveryStep, (typeof METRIC)[keyof typeof METRIC]>> = {
  delivered: METRIC.deliveriesDelivered,
  failed: METRIC.deliveriesFailed,
  'retry-scheduled': METRIC.deliveriesRetried,
};

/**
 * The delivery worker (SQS event source, ReportBatchItemFailures). Messages are independent:
 * each is processed concurrently and only the ones that failed are reported, so the queue
 * redelivers them after the visibility timeout. A malformed message is logged and dropped.
 * `deps` replaces what the worker calls beyond the table (tests inject faults here).
 */
export const deliveryHandler = (deps: Partial<WorkerDeps> = {}) => {
  // One line per endpoint per window, with the attempt and the status or error, then a summary (failure-log.ts).
  const failures = failureLog((message, fields) => logger.warn(message, fields));
  const workerDeps: Partial<WorkerDeps> = { onFailedAttempt: (f) => failures.note(f), ...deps };
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const steps: DeliveryStep[] = [];
    const failed = await Promise.all(
      event.Records.map(async (record) => {
        const ref = parseDeliveryRef(record.body);
        if (!ref) {
          logger.error('malformed delivery message dropped', { messageId: record.messageId });
          return undefined;
        }
        try {
          const step = await processDelivery(ref, workerDeps);
          steps.push(step);
          logger.debug('delivery message handled', { deliveryId: ref.delivery_id, step });
          return undefined;
        } catch (error) {
          logger.error('delivery message failed', { deliveryId: ref.delivery_id, error: error as Error });
          return record.messageId;
        }
      }),
    );
    for (const [step, metric] of Object.entries(OUTCOME_METRICS)) countMetric(metric, steps.filter((s) => s === step).length);
    return { batchItemFailures: failed.filter((id): id is string => id !== undefined).map((itemIdentifier) => ({ itemIdentifier })) };
  };
};

/** Traced, with the Lambda request id on every log line (shared/http/instrumented.ts). */
export const handler = instrumented('delivery', deliveryHandler());
