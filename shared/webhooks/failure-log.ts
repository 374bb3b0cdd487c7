import { optionalEnv } from '../config/env.js';

/** One failed delivery attempt, as the worker saw it. */
export interface FailedAttempt {
  deliveryId: string;
  endpointId: string;
  /** The attempt's number (1 for the first). */
  attempt: number;
  /** The receiver's HTTP status, when an answer came. */
  httpStatus: number | null;
  /** Why it failed (the status, a time-out, a connection error…). */
  error: string;
  /** When the next attempt is due; null when none is left. */
  nextAttemptAt: string | null;
}

export type FailureLogSink = (message: string, fields: Record<string, unknown>) => void;

export interface FailureLog {
  note(failure: FailedAttempt): void;
  /** Writes the summaries of suppressed failures now (at the end of a run, for instance). */
  flush(): void;
}

export const DEFAULT_FAILURE_LOG_SECONDS = 60;

/** `WEBHOOK_FAILURE_LOG_SECONDS`: the window of the per-endpoint failure log; default 60, 0 = a line for every failure. */
export function failureLogSeconds(): number {
  const raw = optionalEnv('WEBHOOK_FAILURE_LOG_SECONDS');
  if (raw === undefined) return DEFAULT_FAILURE_LOG_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error('WEBHOOK_FAILURE_LOG_SECONDS must be a non-negative number of seconds');
  return n;
}

interface Window {
  startedAt: number;
  suppressed: number;
  attempts: { min: number; max: number };
  /** Failures per reason ("HTTP 500", "connect ECONNREFUSED …"), for the summary. */
  reasons: Map<string, number>;
  timer?: ReturnType<typeof setTimeout>;
}

const reasonOf = (f: FailedAttempt) => (f.httpStatus !== null ? `HTTP ${f.httpStatus}` : f.error || 'unknown error');

/**
 * Failed webhook attempts, logged without flooding: the first failure of an endpoint in a window
 * of `windowSeconds` gets a line of its own (delivery, endpoint, attempt number, HTTP status or
 * error, next attempt); the rest of that window's failures of the same endpoint are counted and
 * written as one line when the window ends: "N more failures of endpoint X in the last Ns",
 * with their reasons and attempt numbers. A dead receiver thus costs at most two lines per
 * endpoint per window, whatever the number of deliveries. Per process (each Lambda container
 * keeps its own windows); the timers do not keep a process alive.
 */
export function failureLog(sink: FailureLogSink, opts: { windowSeconds?: number; now?: () => number } = {}): FailureLog {
  const now = opts.now ?? Date.now;
  const windows = new Map<string, Window>();

  const close = (endpointId: string) => {
    const w = windows.get(endpointId);
    if (!w) return;
    windows.delete(endpointId);
    if (w.timer) clearTimeout(w.timer);
    if (w.suppressed === 0) return;
    const seconds = Math.max(1, Math.round((now() - w.startedAt) / 1000));
    sink(`${w.suppressed} more failure${w.suppressed === 1 ? '' : 's'} of endpoint ${endpointId} in the last ${seconds}s`, {
      endpointId,
      failures: w.suppressed,
      windowSeconds: seconds,
      attempts: w.attempts.min === w.attempts.max ? String(w.attempts.min) : `${w.attempts.min}-${w.attempts.max}`,
      reasons: Object.fromEntries(w.reasons),
    });
  };

  return {
    note(f) {
      const windowMs = (opts.windowSeconds ?? failureLogSeconds()) * 1000;
      const open = windows.get(f.endpointId);
      if (open && now() - open.startedAt < windowMs) {
        open.suppressed++;
        open.attempts.min = Math.min(open.attempts.min, f.attempt);
        open.attempts.max = Math.max(open.attempts.max, f.attempt);
        open.reasons.set(reasonOf(f), (open.reasons.get(reasonOf(f)) ?? 0) + 1);
        return;
      }
      close(f.endpointId);
      sink(f.nextAttemptAt ? 'webhook attempt failed, retry scheduled' : 'webhook attempt failed, no attempts left', {
        deliveryId: f.deliveryId,
        endpointId: f.endpointId,
        attempt: f.attempt,
        ...(f.httpStatus !== null ? { httpStatus: f.httpStatus } : {}),
        error: f.error,
        nextAttemptAt: f.nextAttemptAt,
      });
      if (windowMs <= 0) return;
      const w: Window = { startedAt: now(), suppressed: 0, attempts: { min: Infinity, max: 0 }, reasons: new Map() };
      w.timer = setTimeout(() => close(f.endpointId), windowMs);
      w.timer.unref?.();
      windows.set(f.endpointId, w);
    },
    flush() {
      for (const id of [...windows.keys()]) close(id);
    },
  };
}
