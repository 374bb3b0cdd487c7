/**
 * The soak's HTTP side: one account's calls (`POST /api/<operation>`, the contract's envelope),
 * with the time each answer was acknowledged, and retries only where a retry cannot apply a write
 * twice (reads, and creates sent with an `Idempotency-Key`). A 429 is always waited out.
 */
import { randomUUID } from 'node:crypto';

export interface ApiError {
  code: string;
  message: string;
  request_id?: string;
  details?: unknown;
}

export interface Answer<T> {
  /** HTTP status; 0 when no answer came (network error, time-out). */
  status: number;
  ok: boolean;
  result: T;
  error?: ApiError;
  /** Epoch ms when the whole answer had been read (the write's acknowledgement). */
  ackAt: number;
  sentAt: number;
}

export interface CallOptions {
  /** Sent as `Idempotency-Key` (the call is then retried on 5xx and network errors with the same key). */
  idempotent?: boolean;
  /** A read: retried on 5xx and network errors. */
  read?: boolean;
  /** Per-attempt time-out (default 60 s). */
  timeoutMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Api {
  requests = 0;
  /** Attempts that got no usable answer and were retried (5xx, network, 429). */
  retried = 0;

  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  async call<T = Record<string, unknown>>(op: string, body: unknown, opts: CallOptions = {}): Promise<Answer<T>> {
    const key = opts.idempotent ? randomUUID() : undefined;
    const retryable = Boolean(opts.idempotent || opts.read);
    let failures = 0;
    for (;;) {
      const sentAt = Date.now();
      this.requests++;
      let status = 0;
      let parsed: { ok?: boolean; result?: T; error?: ApiError } | undefined;
      let networkError: string | undefined;
      let retryAfter = 0;
      try {
        const res = await fetch(`${this.baseUrl}/api/${op}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
        });
        status = res.status;
        retryAfter = Number(res.headers.get('retry-after') ?? 0);
        const text = await res.text();
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          parsed = { ok: false, error: { code: 'soak.bad_envelope', message: `HTTP ${status}: ${text.slice(0, 200)}` } };
        }
      } catch (error) {
        networkError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
      const ackAt = Date.now();
      if (status === 429) {
        this.retried++;
        await sleep(Math.max(200, retryAfter * 1000));
        continue;
      }
      // A retried create whose first attempt is still running answers 409 for a while: ask again.
      const stillRunning = opts.idempotent && failures > 0 && status === 409;
      if ((status === 0 || status >= 500 || stillRunning) && retryable && failures < 4) {
        failures++;
        this.retried++;
        await sleep(500 * 2 ** failures);
        continue;
      }
      if (status === 0) return { status, ok: false, result: undefined as T, error: { code: 'soak.network', message: networkError ?? 'no answer' }, ackAt, sentAt };
      const ok = status >= 200 && status < 300 && parsed?.ok === true;
      return { status, ok, result: parsed?.result as T, ...(ok ? {} : { error: parsed?.error ?? { code: 'soak.bad_envelope', message: `HTTP ${status}` } }), ackAt, sentAt };
    }
  }
}

/** A one-line description of a failed answer. */
export const describeFailure = (op: string, a: Answer<unknown>) => `${op}: HTTP ${a.status} ${a.error?.code ?? ''} ${a.error?.message ?? ''}${a.error?.request_id ? ` (request ${a.error.request_id})` : ''}`.trim();
