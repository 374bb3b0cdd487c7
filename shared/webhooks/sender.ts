import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { addressRefusal, guardedLookup, parseWebhookUrl, policyFor } from './ssrf.js';

export interface AttemptResult {
  ok: boolean;
  /** The HTTP status, when an answer came. */
  statusCode: number | null;
  /** Why the attempt failed ("" on success). */
  error: string;
}

export interface PostArgs {
  url: string;
  body: string;
  /** `webhook-id`: the delivery id, the same on every attempt. */
  deliveryId: string;
  secret: string;
  timeoutMs: number;
  allowInsecure: boolean;
  at?: Date;
}

/** Standard Webhooks headers: id, Unix-seconds timestamp of this attempt, `v1,<base64 HMAC-SHA256>`. */
export function signedHeaders(deliveryId: string, secret: string, body: string, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': deliveryId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(deliveryId, at, body),
  };
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
 * actually connected to, a hard time-out for connect + answer, and no redirects followed
 * (node's client never follows them; a 3xx is a failed attempt). Never throws.
 */
export function postWebhook(args: PostArgs): Promise<AttemptResult> {
  const url = parseWebhookUrl(args.url, args.allowInsecure);
  if (!url) return Promise.resolve({ ok: false, statusCode: null, error: 'url is not allowed' });
  const policy = policyFor(url, args.allowInsecure);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return Promise.resolve({ ok: false, statusCode: null, error: refusal });
  }
  const body = Buffer.from(args.body, 'utf8');
  const headers = { ...signedHeaders(args.deliveryId, args.secret, args.body, args.at ?? new Date()), 'content-length': String(body.length), 'user-agent': 'crm-webhooks/1.0' };
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = client.request(url, { method: 'POST', headers, lookup: guardedLookup(policy), agent: false }, (res) => {
      const code = res.statusCode ?? 0;
      res.resume(); // the answer's body is not needed; drain it so the socket closes
      res.on('error', () => undefined);
      if (code >= 200 && code < 300) finish({ ok: true, statusCode: code, error: '' });
      else if (code >= 300 && code < 400) finish({ ok: false, statusCode: code, error: `redirect (HTTP ${code}) not followed` });
      else finish({ ok: false, statusCode: code, error: `HTTP ${code}` });
    });
    const timer = setTimeout(() => {
      req.destroy(Object.assign(new Error('webhook attempt timed out'), { code: 'ETIMEDOUT_WEBHOOK' }));
    }, args.timeoutMs);
    req.on('error', (error) => finish({ ok: false, statusCode: null, error: describe(error, args.timeoutMs) }));
    req.end(body);
  });
}
