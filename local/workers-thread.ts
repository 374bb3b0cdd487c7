/**
 * Local mode's background functions in a thread of their own (`CRM_LOCAL_WORKERS=thread`): every
 * non-API function of the topology, started by the same loop and with the same handlers and
 * settings as in the main thread (local/background-workers.ts). The API then keeps its own event
 * loop: a big import or a flood of failing deliveries does not queue the API's callbacks
 * (docs/performance.md, "Mixed load"). Messages: `drain` (a function's name), `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { TriggerKind } from '../functions/topology.js';
import { startBackgroundWorkers, type WorkerResources } from './background-workers.js';

export interface WorkersThreadData extends WorkerResources {
  entry: string;
}

/** What the thread says of each function it started. */
export interface StartedFunction {
  name: string;
  kind: TriggerKind;
  address?: { host: string; port: number };
}

export type WorkersMessage = { type: 'drain'; id: number; name: string; timeoutMs?: number } | { type: 'stop'; id: number } | { type: 'states'; id: number };
export type WorkersReply =
  | { type: 'ready'; functions: StartedFunction[] }
  | { type: 'done'; id: number; error?: string; states?: Record<string, unknown> }
  | { type: 'error'; name: string; kind: TriggerKind; message: string };

const data = workerData as WorkersThreadData;
const port = parentPort!;

const workers = await startBackgroundWorkers(data, {
  onError: (fn, e) => port.postMessage({ type: 'error', name: fn.name, kind: fn.kind, message: e instanceof Error ? e.message : String(e) } satisfies WorkersReply),
});

port.on('message', (message: WorkersMessage) => {
  const run = async (): Promise<Record<string, unknown> | undefined> => {
    if (message.type === 'stop') {
      await workers.stop();
      return undefined;
    }
    if (message.type === 'states') return workers.states();
    const fn = workers.functions[message.name];
    if (!fn) throw new Error(`no background function ${message.name}`);
    await fn.drain(message.timeoutMs);
    return undefined;
  };
  run().then(
    (states) => port.postMessage({ type: 'done', id: message.id, ...(states ? { states } : {}) } satisfies WorkersReply),
    (error: unknown) => port.postMessage({ type: 'done', id: message.id, error: error instanceof Error ? error.message : String(error) } satisfies WorkersReply),
  );
});
port.postMessage({ type: 'ready', functions: Object.values(workers.functions).map(({ name, kind, address }) => ({ name, kind, address })) } satisfies WorkersReply);
