import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { addressRefusal, bareHost, parseWebhookUrl, policyFor } from '../net/ssrf.js';
import { MAX_RESPONSE_BYTES } from './config.js';
import { guardedLookup } from './ssrf.js';

export interface AttemptResult {
  ok: boolean;
  /** The HTTP status, when an answer came. */
  statusCode: number | null;
  /** Why the attempt failed ("" on success). */
  error: string;
  /** The answer's `Retry-After` as epoch milliseconds (seconds or an HTTP date), when given. */
  retryAfterMs?: number;
}

export interface PostArgs {
  url: string;
  body: string;
  /** `webhook-id`: the delivery id, the same on every attempt. */
  deliveryId: string;
  /** Signing secrets, newest first: one `v1,` signature each (two during a rotation's grace period). */
  secrets: string[];
  timeoutMs: number;
  allowInsecure: boolean;
  at?: Date;
}

/**
 * Standard Webhooks headers: id, Unix-seconds timestamp of this attempt, and one
 * `v1,<base64 HMAC-SHA256>` per secret, space-separated, newest secret first.
 */
export function signedHeaders(deliveryId: string, secrets: string | string[], body: string, at: Date): Record<string, string> {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return {
    'content-type': 'application/json',
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': list.map((secret) => new Webhook(secret).sign(deliveryId, at, body)).join(' '),
  };
}

/** `Retry-After`: delta-seconds or an HTTP date, as epoch milliseconds; undefined when unusable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return now + Number(text) * 1000;
  // HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms): always has a day name.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date;
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.name === 'BlockedAddressError') return e.message;
  if (e?.code === 'ETIMEDOUT_WEBHOOK') return `timed out after ${timeoutMs} ms`;
  if (e?.code === 'ECONNREFUSED') return 'connection refused';
  if (e?.code === 'ENOTFOUND') return 'host not found';
  return `connection error: ${e?.code ?? e?.message ?? String(error)}`;
}

/**
 * One attempt: a POST with the Standard Webhooks headers, the SSRF check on the address
 * actually connected to, and no redirects followed (node's client never follows them; a 3xx is
 * a failed attempt). The time-out covers the whole attempt: connect, headers and the answer's
 * body, of which at most MAX_RESPONSE_BYTES are read before the connection is closed (a
 * receiver that trickles its body cannot hold the worker). Never throws.
 */
export function postWebhook(args: PostArgs): Promise<AttemptResult> {
  const url = parseWebhookUrl(args.url, args.allowInsecure);
  if (!url) return Promise.resolve({ ok: false, statusCode: null, error: 'url is not allowed' });
  const policy = policyFor(url, args.allowInsecure);
  const host = bareHost(url.hostname);
  if (isIP(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return Promise.resolve({ ok: false, statusCode: null, error: refusal });
  }
  const body = Buffer.from(args.body, 'utf8');
  const headers = { ...signedHeaders(args.deliveryId, args.secrets, args.body, args.at ?? new Date()), 'content-length': String(body.length), 'user-agent': 'crm-webhooks/1.0' };
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let answered: number | null = null;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy(); // nothing more is read or sent: the socket closes now
      resolve(result);
    };
    const req = client.request(url, { method: 'POST', headers, lookup: guardedLookup(policy), agent: false }, (res) => {
      const code = res.statusCode ?? 0;
      answered = code;
      const retryAfterMs = code === 429 || code === 503 ? parseRetryAfter(res.headers['retry-after'], Date.now()) : undefined;
      const outcome = (): AttemptResult => {
        if (code >= 200 && code < 300) return { ok: true, statusCode: code, error: '' };
        if (code >= 300 && code < 400) return { ok: false, statusCode: code, error: `redirect (HTTP ${code}) not followed` };
        return { ok: false, statusCode: code, error: `HTTP ${code}`, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
      };
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) finish(outcome());
      });
      res.on('end', () => finish(outcome()));
      res.on('error', (error) => finish({ ok: false, statusCode: code, error: describe(error, args.timeoutMs) }));
    });
    const timer = setTimeout(() => {
      req.destroy(Object.assign(new Error('webhook attempt timed out'), { code: 'ETIMEDOUT_WEBHOOK' }));
      const what = answered === null ? '' : ` (HTTP ${answered} answered, body not finished)`;
      finish({ ok: false, statusCode: answered, error: `timed out after ${args.timeoutMs} ms${what}` });
    }, args.timeoutMs);
    req.on('error', (error) => finish({ ok: false, statusCode: null, error: describe(error, args.timeoutMs) }));
    req.end(body);
  });
}
