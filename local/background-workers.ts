/**
 * Local mode's background workers: the stream worker, the delivery worker, the import and export
 * workers and the delivery sweeper, with the handlers Lambda runs. `npm start` runs them in a
 * worker thread (local/workers-thread.ts, the default) or beside the API (`CRM_LOCAL_WORKERS=main`,
 * and tests): both start them here.
 */
import { handler as deliveryHandler } from '../functions/delivery/handler.js';
import { handler as streamHandler } from '../functions/stream/handler.js';
import { parseDeliveryRef } from '../shared/webhooks/queue.js';
import { startExportWorker } from './exports.js';
import { startImportWorker } from './imports.js';
import { type QueueWorker, startQueueWorker } from './queue-worker.js';
import { type StreamPoller, startStreamPoller } from './stream-poller.js';
import { type LocalSweeper, startLocalSweeper } from './webhook-sweeper.js';

/** Where the workers' queues and table are (the bucket and queues exist already: local/job-queue.ts). */
export interface WorkerResources {
  queueEndpoint: string;
  deliveryQueueUrl: string;
  importsQueueUrl: string;
  exportsQueueUrl: string;
  dynamoEndpoint: string;
  tableName: string;
  /** With a data directory, the stream resumes after the last record handled before a restart. */
  positionFile?: string;
}

export interface BackgroundWorkers {
  poller: StreamPoller;
  deliveries: QueueWorker;
  imports: QueueWorker;
  exports: QueueWorker;
  sweeper: LocalSweeper;
  stop(): Promise<void>;
}

export async function startBackgroundWorkers(r: WorkerResources, on: { onStreamError?: (e: unknown) => void; onQueueError?: (e: unknown) => void } = {}): Promise<BackgroundWorkers> {
  // One slow endpoint holds at most its own share of the delivery worker (docs/webhooks.md).
  const deliveries = startQueueWorker({ endpoint: r.queueEndpoint, queueUrl: r.deliveryQueueUrl, handler: deliveryHandler, groupOf: (body) => parseDeliveryRef(body)?.endpoint_id, onError: on.onQueueError });
  const imports = startImportWorker(r.queueEndpoint, r.importsQueueUrl, { onError: on.onQueueError });
  const exports = startExportWorker(r.queueEndpoint, r.exportsQueueUrl, { onError: on.onQueueError });
  // Pending deliveries whose queue message is gone (the in-memory queue starts empty) are re-enqueued.
  const sweeper = startLocalSweeper({ onError: on.onQueueError });
  const poller = await startStreamPoller({ endpoint: r.dynamoEndpoint, tableName: r.tableName, handler: streamHandler, onError: on.onStreamError, positionFile: r.positionFile });
  const stop = async () => {
    await poller.stop();
    await sweeper.stop();
    await deliveries.stop();
    await imports.stop();
    await exports.stop();
  };
  return { poller, deliveries, imports, exports, sweeper, stop };
}
