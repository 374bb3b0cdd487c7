/**
 * Local mode's background functions: every function of the topology that the API server does not
 * serve (stream, queue, schedule and object triggers: functions/topology.ts's WORKERS), each under
 * its trigger's adapter (local/triggers.ts) with the handler Lambda runs. A new worker in the
 * topology starts here with nothing else to change. `npm start` runs them in a worker thread
 * (local/workers-thread.ts, the default) or beside the API (`CRM_LOCAL_WORKERS=main`, and tests):
 * both start them here.
 */
import { FUNCTIONS, type FunctionSpec } from '../functions/topology.js';
import type { LocalResources } from './resources.js';
import { type LocalFunction, runsInBackground, startLocalFunction } from './triggers.js';

/** The resources of the workers (created already: local/resources.ts). */
export type WorkerResources = LocalResources;

export interface BackgroundWorkers {
  /** Every background function by name. */
  functions: Record<string, LocalFunction>;
  /** Each function's liveness state, where its adapter keeps one (`npm run status`). */
  states(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Errors of a function's trigger or handler, with the function. */
export type WorkerErrorHandler = (fn: Pick<FunctionSpec, 'name'> & { kind: FunctionSpec['trigger']['kind'] }, error: unknown) => void;

export async function startBackgroundWorkers(r: WorkerResources, on: { onError?: WorkerErrorHandler } = {}, functions: readonly FunctionSpec[] = FUNCTIONS): Promise<BackgroundWorkers> {
  const started: LocalFunction[] = [];
  // In the topology's order: the stream first, so nothing new reaches the queues' workers meanwhile.
  const stop = async () => {
    for (const fn of started.splice(0)) await fn.stop();
  };
  try {
    for (const spec of functions.filter(runsInBackground)) {
      started.push(await startLocalFunction(spec, { resources: r, onError: (error) => on.onError?.({ name: spec.name, kind: spec.trigger.kind }, error) }));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { functions: Object.fromEntries(started.map((fn) => [fn.name, fn])), states: async () => statesOf(started), stop };
}

/** The liveness states of started functions, by name. */
export function statesOf(functions: readonly LocalFunction[]): Record<string, unknown> {
  return Object.fromEntries(functions.flatMap((fn) => (fn.state ? [[fn.name, fn.state()]] : [])));
}
