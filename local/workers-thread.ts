/**
 * Local mode's background workers in a thread of their own (`CRM_LOCAL_WORKERS=thread`): the
 * stream worker, the delivery worker, the import and export workers and the delivery sweeper, with the same
 * handlers and settings as in the main thread (local/runtime.ts). The API then keeps its own
 * event loop: a big import or a flood of failing deliveries does not queue the API's callbacks
 * (docs/performance.md, "Mixed load"). Messages: `drain` (poller | deliveries | imports | exports), `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { handler as deliveryHandler } from '../functions/delivery/handler.js';
import { handler as streamHandler } from '../functions/stream/handler.js';
import { parseDeliveryRef } from '../shared/webhooks/queue.js';
import { startExportWorker } from './exports.js';
import { startImportWorker } from './imports.js';
import { startQueueWorker } from './queue-worker.js';
import { startStreamPoller } from './stream-poller.js';
import { startLocalSweeper } from './webhook-sweeper.js';

export interface WorkersThreadData {
  entry: string;
  queueEndpoint: string;
  deliveryQueueUrl: string;
  importsQueueUrl: string;
  exportsQueueUrl: string;
  dynamoEndpoint: string;
  tableName: string;
  positionFile?: string;
}

export type WorkersMessage = { type: 'drain'; id: number; what: 'poller' | 'deliveries' | 'imports' | 'exports'; timeoutMs?: number } | { type: 'stop'; id: number };
export type WorkersReply = { type: 'ready' } | { type: 'done'; id: number; error?: string } | { type: 'error'; what: 'stream' | 'queue'; message: string };

const data = workerData as WorkersThreadData;
const port = parentPort!;
const report = (what: 'stream' | 'queue') => (e: unknown) => port.postMessage({ type: 'error', what, message: e instanceof Error ? e.message : String(e) } satisfies WorkersReply);

const deliveries = startQueueWorker({ endpoint: data.queueEndpoint, queueUrl: data.deliveryQueueUrl, handler: deliveryHandler, groupOf: (body) => parseDeliveryRef(body)?.endpoint_id, onError: report('queue') });
const imports = startImportWorker(data.queueEndpoint, data.importsQueueUrl, { onError: report('queue') });
const exports = startExportWorker(data.queueEndpoint, data.exportsQueueUrl, { onError: report('queue') });
const sweeper = startLocalSweeper({ onError: report('queue') });
const poller = await startStreamPoller({ endpoint: data.dynamoEndpoint, tableName: data.tableName, handler: streamHandler, onError: report('stream'), positionFile: data.positionFile });

port.on('message', (message: WorkersMessage) => {
  const run = async () => {
    if (message.type === 'stop') {
      await poller.stop();
      await sweeper.stop();
      await deliveries.stop();
      await imports.stop();
      await exports.stop();
      return;
    }
    await { poller, deliveries, imports, exports }[message.what].drain(message.timeoutMs);
  };
  run().then(
    () => port.postMessage({ type: 'done', id: message.id } satisfies WorkersReply),
    (error: unknown) => port.postMessage({ type: 'done', id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies WorkersReply),
  );
});
port.postMessage({ type: 'ready' } satisfies WorkersReply);
