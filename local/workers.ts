import { Worker } from 'node:worker_threads';
import type { BackgroundWorkers, WorkerErrorHandler } from './background-workers.js';
import type { LocalFunction } from './triggers.js';
import type { StartedFunction, WorkersMessage, WorkersReply, WorkersThreadData } from './workers-thread.js';

/**
 * Starts local/workers-thread.ts in a worker thread (it gets a copy of this process's environment
 * as it is now) and answers for its functions: drain() and stop() are messages to the thread.
 */
export async function startWorkersThread(data: Omit<WorkersThreadData, 'entry'>, opts: { onError?: WorkerErrorHandler } = {}): Promise<BackgroundWorkers> {
  const worker = new Worker(new URL('./workers-thread-boot.mjs', import.meta.url), { workerData: { ...data, entry: new URL('./workers-thread.ts', import.meta.url).href } satisfies WorkersThreadData });
  const pending = new Map<number, { resolve: (states?: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  let next = 0;
  let exited = false;
  const ready = new Promise<StartedFunction[]>((resolve, reject) => {
    worker.on('message', (reply: WorkersReply) => {
      if (reply.type === 'ready') resolve(reply.functions);
      else if (reply.type === 'error') opts.onError?.({ name: reply.name, kind: reply.kind }, new Error(reply.message));
      else {
        const p = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.error) p?.reject(new Error(reply.error));
        else p?.resolve(reply.states);
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      exited = true;
      reject(new Error(`workers thread exited (${code})`));
      for (const p of pending.values()) p.reject(new Error('workers thread exited'));
    });
  });
  const started = await ready;
  const send = (message: WorkersMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never) =>
    exited
      ? Promise.resolve(undefined)
      : new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
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
  const functions: Record<string, LocalFunction> = Object.fromEntries(
    started.map((fn) => [fn.name, { ...fn, drain: async (timeoutMs?: number) => void (await send({ type: 'drain', name: fn.name, timeoutMs })), stop }]),
  );
  return { functions, states: async () => (await send({ type: 'states' })) ?? {}, stop };
}
