import { Worker } from 'node:worker_threads';
import type { QueueWorker } from './queue-worker.js';
import type { StreamPoller } from './stream-poller.js';
import type { LocalSweeper } from './webhook-sweeper.js';
import type { WorkersMessage, WorkersReply, WorkersThreadData } from './workers-thread.js';

export interface WorkersThread {
  poller: StreamPoller;
  deliveries: QueueWorker;
  imports: QueueWorker;
  exports: QueueWorker;
  sweeper: LocalSweeper;
  stop(): Promise<void>;
}

/**
 * Starts local/workers-thread.ts in a worker thread (it gets a copy of this process's environment
 * as it is now) and answers for its workers: drain() and stop() are messages to the thread.
 */
export async function startWorkersThread(data: Omit<WorkersThreadData, 'entry'>, opts: { onStreamError?: (e: unknown) => void; onQueueError?: (e: unknown) => void } = {}): Promise<WorkersThread> {
  const worker = new Worker(new URL('./workers-thread-boot.mjs', import.meta.url), { workerData: { ...data, entry: new URL('./workers-thread.ts', import.meta.url).href } satisfies WorkersThreadData });
  const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let next = 0;
  let exited = false;
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: WorkersReply) => {
      if (reply.type === 'ready') resolve();
      else if (reply.type === 'error') (reply.what === 'stream' ? opts.onStreamError : opts.onQueueError)?.(new Error(reply.message));
      else {
        const p = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.error) p?.reject(new Error(reply.error));
        else p?.resolve();
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      exited = true;
      reject(new Error(`workers thread exited (${code})`));
      for (const p of pending.values()) p.reject(new Error('workers thread exited'));
    });
  });
  await ready;
  const send = (message: Omit<WorkersMessage, 'id'>) =>
    exited
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const id = ++next;
          pending.set(id, { resolve, reject });
          worker.postMessage({ ...message, id });
        });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await send({ type: 'stop' });
      await worker.terminate();
    })());
  const drainer = (what: 'poller' | 'deliveries' | 'imports' | 'exports') => (timeoutMs?: number) => send({ type: 'drain', what, timeoutMs } as Omit<WorkersMessage, 'id'>);
  return {
    poller: { drain: drainer('poller'), stop },
    deliveries: { drain: drainer('deliveries'), stop },
    imports: { drain: drainer('imports'), stop },
    exports: { drain: drainer('exports'), stop },
    sweeper: { stop, sweep: () => Promise.reject(new Error('the sweeper runs in the workers thread')) },
    stop,
  };
}
