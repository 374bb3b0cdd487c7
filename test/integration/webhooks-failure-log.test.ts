/**
 * Issue 24, "The first hour" 6: a failed webhook attempt's log line carries the attempt number
 * and the HTTP status or the error, and a dead receiver does not flood the log (an import with
 * a dead receiver printed 2,369 lines: one per failed attempt).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../local/dynamo.js';
import { logger } from '../../shared/http/logger.js';
import { failureLog } from '../../shared/webhooks/failure-log.js';
import { newAccount, ok } from '../helpers/api.js';
import { type Pipeline, startPipeline } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
// Nothing listens at the endpoint: a refused connection fails at once; the time-out only has to outlast a loaded machine's connect.
process.env.WEBHOOK_TIMEOUT_MS = '3000';

interface Line {
  message: string;
  endpointId?: string;
  attempt?: number;
  httpStatus?: number;
  error?: string;
  failures?: number;
}

describe('failureLog (unit)', () => {
  it('writes the first failure of an endpoint with attempt and status, then one summary per window', () => {
    let clock = 0;
    const lines: Line[] = [];
    const log = failureLog((message, fields) => lines.push({ message, ...fields }), { windowSeconds: 10, now: () => clock });
    const fail = (endpointId: string, attempt: number, httpStatus: number | null, error = httpStatus ? `HTTP ${httpStatus}` : 'connect ECONNREFUSED 127.0.0.1:9') =>
      log.note({ deliveryId: `d${attempt}`, endpointId, attempt, httpStatus, error, nextAttemptAt: attempt < 8 ? '2030-01-01T00:00:00.000Z' : null });
    fail('a', 1, 500);
    for (let i = 0; i < 99; i++) fail('a', 2, null);
    fail('b', 8, 503);
    expect(lines).toEqual([
      { message: 'webhook attempt failed, retry scheduled', deliveryId: 'd1', endpointId: 'a', attempt: 1, httpStatus: 500, error: 'HTTP 500', nextAttemptAt: '2030-01-01T00:00:00.000Z' },
      { message: 'webhook attempt failed, no attempts left', deliveryId: 'd8', endpointId: 'b', attempt: 8, httpStatus: 503, error: 'HTTP 503', nextAttemptAt: null },
    ]);
    clock = 10_000;
    fail('a', 3, 500); // a new window: the last one's summary first
    expect(lines.slice(2)).toEqual([
      { message: '99 more failures of endpoint a in the last 10s', endpointId: 'a', failures: 99, windowSeconds: 10, attempts: '2', reasons: { 'connect ECONNREFUSED 127.0.0.1:9': 99 } },
      expect.objectContaining({ message: 'webhook attempt failed, retry scheduled', endpointId: 'a', attempt: 3, httpStatus: 500 }),
    ]);
    log.flush(); // nothing suppressed: no summary line
    expect(lines).toHaveLength(4);
  });

  it('writes every failure with a window of 0', () => {
    const lines: string[] = [];
    const log = failureLog((message) => lines.push(message), { windowSeconds: 0 });
    for (let i = 1; i <= 3; i++) log.note({ deliveryId: 'd', endpointId: 'a', attempt: i, httpStatus: 500, error: 'HTTP 500', nextAttemptAt: null });
    expect(lines).toHaveLength(3);
  });
});

describe('a dead receiver under many deliveries', () => {
  // 40 contacts, their events and 120 attempts.
  let pipeline: Pipeline;
  const written: string[] = [];
  beforeAll(async () => {
    process.env.WEBHOOK_FAILURE_LOG_SECONDS = '2';
    logger.setLogLevel('WARN');
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    pipeline = await startPipeline();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    logger.setLogLevel('CRITICAL');
    delete process.env.WEBHOOK_FAILURE_LOG_SECONDS;
    await pipeline?.stop();
  });

  /** Far more failures than the lines a run of a few seconds may write. */
  const DELIVERIES = 40;
  it('logs 120 failed attempts of one endpoint in a few lines that count all of them', { timeout: 120_000 }, async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0,0'; // three attempts per delivery
    const auth = newAccount();
    const deadPort = await freePort(); // nothing listens there: connection refused
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: `http://127.0.0.1:${deadPort}/hook`, events: ['contact.created'] }, auth);
    const started = Date.now();
    await ok('contacts-batch-create', { items: Array.from({ length: DELIVERIES }, (_, i) => ({ first_name: 'Dead', last_name: `Receiver${i}` })) }, auth);
    await pipeline.poller?.drain(); // every delivery created; their attempts are waited on below (a queue that keeps retrying has no idle moment to wait for)
    await waitAllFailed(auth, endpoint.id, DELIVERIES);
    const elapsed = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 2_300)); // the last window's summary

    const lines = written
      .flatMap((w) => w.split('\n'))
      .filter((l) => l.includes(endpoint.id))
      .map((l) => JSON.parse(l) as Line);
    const single = lines.filter((l) => l.message.startsWith('webhook attempt failed'));
    const summaries = lines.filter((l) => / more failures? of endpoint /.test(l.message));
    expect(single.length + summaries.length).toBe(lines.length);
    // Every failure is counted: 40 deliveries × 3 attempts.
    expect(single.length + summaries.reduce((n, l) => n + l.failures!, 0)).toBe(3 * DELIVERIES);
    // At most two lines per endpoint per 2-second window (one per failure before: 120).
    expect(lines.length).toBeLessThanOrEqual(2 * Math.ceil(elapsed / 2) + 2);
    expect(single[0]).toMatchObject({ attempt: expect.any(Number), error: 'connection refused' });
    console.info(`${3 * DELIVERIES} failed attempts in ${elapsed.toFixed(1)} s → ${lines.length} log lines`);
  });
});

async function waitAllFailed(auth: ReturnType<typeof newAccount>, endpointId: string, count: number) {
  // Every page of the endpoint's deliveries, until none is pending; fails only after 20 s
  // without progress (no new delivery, none more finished), like the poller's drain().
  let deadline = Date.now() + 20_000;
  let last = '';
  for (;;) {
    let cursor: string | undefined;
    let total = 0;
    let pending = 0;
    do {
      const page = await ok<{ deliveries: { status: string }[]; next_cursor: string }>('webhooks-deliveries', { endpoint_id: endpointId, limit: 100, ...(cursor ? { cursor } : {}) }, auth);
      total += page.deliveries.length;
      pending += page.deliveries.filter((d) => d.status === 'pending').length;
      cursor = page.next_cursor || undefined;
    } while (cursor);
    if (total >= count && pending === 0) return;
    if (`${total}/${pending}` !== last) {
      last = `${total}/${pending}`;
      deadline = Date.now() + 20_000;
    }
    if (Date.now() > deadline) throw new Error(`${pending} of ${total} deliveries still pending`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
