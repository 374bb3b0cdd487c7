import { optionalEnv, requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';

/** Webhook settings, read from the environment on every use (tests change them per file). */

export const DEFAULT_RETRY_DELAYS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** SQS's longest DelaySeconds; longer waits are re-enqueued (see docs/webhooks.md). */
export const MAX_SQS_DELAY_SECONDS = 900;

/**
 * `WEBHOOK_RETRY_DELAYS`: comma-separated seconds to wait after each failed attempt. The number
 * of attempts is one more than the number of delays. Anything else than non-negative numbers
 * is a configuration error.
 */
export function retryDelays(): number[] {
  const raw = optionalEnv('WEBHOOK_RETRY_DELAYS');
  if (raw === undefined) return [...DEFAULT_RETRY_DELAYS];
  const parts = raw.split(',').map((s) => s.trim());
  const delays = parts.map(Number);
  if (parts.some((s) => s === '') || delays.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new Error('WEBHOOK_RETRY_DELAYS must be comma-separated non-negative numbers of seconds');
  }
  return delays;
}

/** `WEBHOOK_TIMEOUT_MS`: time-out of one attempt (connect + response), 10 s by default. */
export function attemptTimeoutMs(): number {
  const raw = optionalEnv('WEBHOOK_TIMEOUT_MS');
  if (raw === undefined) return DEFAULT_TIMEOUT_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error('WEBHOOK_TIMEOUT_MS must be a positive integer');
  return n;
}

/**
 * How long a claimed attempt keeps other workers off the delivery. Longer than an attempt can
 * take; a worker that dies mid-attempt frees the delivery when it runs out.
 */
export const attemptLeaseMs = () => 2 * attemptTimeoutMs() + 1_000;

/** At most this much of a receiver's answer body is read (then the connection is closed). */
export const MAX_RESPONSE_BYTES = 1024;

function positiveNumber(name: string, fallback: number, min = 0): number {
  const raw = optionalEnv(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number of at least ${min}`);
  return n;
}

/**
 * `WEBHOOK_DISABLE_AFTER_SECONDS`: an endpoint whose attempts have all failed this long since
 * `failing_since` is disabled (`disabled_reason` "failing"). Default five days.
 */
export const disableAfterSeconds = () => positiveNumber('WEBHOOK_DISABLE_AFTER_SECONDS', 432_000);

/**
 * `WEBHOOK_SWEEP_GRACE_SECONDS`: the sweeper re-enqueues a pending delivery only once it is
 * overdue by this much (its queue message, if it still exists, normally acts first). Default 120.
 */
export const sweepGraceSeconds = () => positiveNumber('WEBHOOK_SWEEP_GRACE_SECONDS', 120);

/** A delivery the sweeper re-enqueued this often without any attempt being recorded ends `failed`. */
export const MAX_SWEEPS = 10;

export const deliveryQueueUrl = () => requireEnv(bindingEnv('deliveryQueue'));
