/**
 * Local mode's background workers in a thread of their own (`CRM_LOCAL_WORKERS=thread`): the
 * stream worker, the delivery worker, the import and export workers and the delivery sweeper, with the same
 * handlers and settings as in the main thread (local/runtime.ts). The API then keeps its own
 * event loop: a big import or a flood of failing deliveries does not queue the API's callbacks
 * (docs/performance.md, "Mixed load"). Messages: `drain` (poller | deliveries | imports | exports), `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startBackgroundWorkers, type WorkerResources } from './background-workers.js';

export interface WorkersThreadData extends WorkerResources {
  entry: string;
}

export type WorkersMessage = { type: 'drain'; id: number; what: 'poller' | 'deliveries' | 'imports' | 'exports'; timeoutMs?: number } | { type: 'stop'; id: number };
export type WorkersReply = { type: 'ready' } | { type: 'done'; id: number; error?: string } | { type: 'error'; what: 'stream' | 'queue'; message: string };

const data = workerData as WorkersThreadData;
const port = parentPort!;
const report = (what: 'stream' | 'queue') => (e: unknown) => port.postMessage({ type: 'error', what, message: e instanceof Error ? e.message : String(e) } satisfies WorkersReply);

const workers = await startBackgroundWorkers(data, { onStreamError: report('stream'), onQueueError: report('queue') });

port.on('message', (message: WorkersMessage) => {
  const run = async () => {
    if (message.type === 'stop') {
      await workers.stop();
      return;
    }
    await { poller: workers.poller, deliveries: workers.deliveries, imports: workers.imports, exports: workers.exports }[message.what].drain(message.timeoutMs);
  };
  run().then(
    () => port.postMessage({ type: 'done', id: message.id } satisfies WorkersReply),
    (error: unknown) => port.postMessage({ type: 'done', id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies WorkersReply),
  );
});
port.postMessage({ type: 'ready' } satisfies WorkersReply);
