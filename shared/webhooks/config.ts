import { boolEnv, optionalEnv, requireEnv } from '../config/env.js';

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

export const maxAttempts = () => retryDelays().length + 1;

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

/** `CRM_ALLOW_INSECURE_WEBHOOKS`: local development only (http and https to loopback hosts). */
export const allowInsecureWebhooks = () => boolEnv('CRM_ALLOW_INSECURE_WEBHOOKS', false);

export const deliveryQueueUrl = () => requireEnv('DELIVERY_QUEUE_URL');
