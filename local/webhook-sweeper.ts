import { optionalEnv } from '../shared/config/env.js';
import { type SweepResult, sweepDueDeliveries } from '../shared/webhooks/sweeper.js';

export interface LocalSweeper {
  stop(): Promise<void>;
  /** Runs one sweep now (tests). */
  sweep(graceSeconds?: number): Promise<SweepResult>;
}

/** Local mode's overdue margin: the in-process queue acts within milliseconds of a due time. */
export const LOCAL_SWEEP_GRACE_SECONDS = 15;

/**
 * The delivery sweeper in local mode (deployed: an EventBridge schedule, lib/webhook-sweeper.ts).
 * The first sweep runs at once with no grace: after a restart with CRM_DATA_DIR the in-process
 * queue is empty, so every pending delivery that is due is enqueued again; later sweeps run
 * every `intervalMs` and pick up deliveries whose (lost) message would have come since.
 */
export function startLocalSweeper(opts: { intervalMs?: number; graceSeconds?: number; onError?: (e: unknown) => void } = {}): LocalSweeper {
  const grace = opts.graceSeconds ?? Number(optionalEnv('WEBHOOK_SWEEP_GRACE_SECONDS') ?? LOCAL_SWEEP_GRACE_SECONDS);
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<unknown> = Promise.resolve();
  const sweep = (graceSeconds = grace) => {
    const run = sweepDueDeliveries({ graceSeconds });
    current = run.catch(() => undefined);
    return run;
  };
  const schedule = (delay: number, graceSeconds?: number) => {
    timer = setTimeout(() => {
      void sweep(graceSeconds)
        .catch((error: unknown) => opts.onError?.(error))
        .finally(() => {
          if (running) schedule(opts.intervalMs ?? 5_000);
        });
    }, delay);
  };
  schedule(0, 0);
  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await current;
    },
    sweep,
  };
}
