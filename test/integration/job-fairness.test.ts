/**
 * Fairness of the job queues between accounts (shared/http/job-handler.ts): an account that
 * already has `perAccount` jobs held by workers gets its next one put back on the queue (sent
 * again after DEFER_SECONDS, and woken at once when a place is given back), so another account's
 * job finds a free worker at once. Against
 * DynamoDB Local and an in-process fauxqs, with the import worker as the topology runs it (its
 * grants enforced by local IAM).
 */
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexBuildHandler } from '../../functions/custom-fields/index-worker.js';
import { erasureHandler } from '../../functions/erasures/worker.js';
import { exportHandler } from '../../functions/exports/worker.js';
import { importHandler } from '../../functions/imports/worker.js';
import { functionByName } from '../../functions/topology.js';
import { asFunction } from '../../local/iam.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { DEFER_SECONDS } from '../../shared/http/job-handler.js';
import { importFairness } from '../../shared/imports/worker.js';
import { newAccount, ok } from '../helpers/api.js';
import { waitFor } from '../helpers/webhook-harness.js';

type Job = { id: string; status: string; processed_rows: number };

let queue: LocalQueue;
let imports: LocalImports;
/** Every message the import queue delivered, in order, with when: this file runs the worker itself. */
const delivered: { body: { account_id: string; import_id: string }; at: number }[] = [];

beforeAll(async () => {
  queue = await startLocalQueue('crm-job-fairness');
  imports = await startLocalImports(queue.endpoint, {
    handler: async (event: SQSEvent) => {
      for (const r of event.Records) delivered.push({ body: JSON.parse(r.body) as { account_id: string; import_id: string }, at: Date.now() });
      return { batchItemFailures: [] };
    },
    visibilityTimeoutSeconds: 1,
  });
});
afterAll(async () => {
  await imports?.stop();
  await queue?.stop();
});

let open: () => void = () => undefined;
const opened = new Promise<void>((resolve) => (open = resolve));
const workerOf = (deps: Parameters<typeof importHandler>[0] = {}) => asFunction(functionByName('importWorker')!, importHandler(deps));
const worker = workerOf();
/** Workers busy with long imports: each waits after its first chunk until `open` is called. */
const busyWorker = workerOf({ afterApply: () => opened });
const eventOf = (accountId: string, id: string) => ({ Records: [{ messageId: `m-${id}`, body: JSON.stringify({ account_id: accountId, import_id: id }) }] }) as unknown as SQSEvent;
const deliveriesOf = (id: string) => delivered.filter((d) => d.body.import_id === id);

describe('job queues between accounts', () => {
  it('puts back an account’s import beyond its two running ones; another account’s runs at once; the put-back one runs once a place frees', async () => {
    expect(importFairness.perAccount).toBe(2);
    const a = newAccount();
    const b = newAccount();
    const csv = 'first_name\nAda\n';
    const mine: Job[] = [];
    for (let i = 0; i < 3; i++) mine.push(await ok<Job>('imports-create', { object_type: 'contacts', csv }, a));
    const theirs = await ok<Job>('imports-create', { object_type: 'contacts', csv }, b);
    await waitFor(() => (delivered.length >= 4 ? true : undefined), 10_000, 'the four queued messages');

    // Two workers run A's first two imports (held after their first chunk).
    const running = mine.slice(0, 2).map((j) => busyWorker(eventOf(a.accountId, j.id)));
    await waitFor(async () => ((await Promise.all(mine.slice(0, 2).map((j) => ok<Job>('imports-get', { id: j.id }, a)))).every((j) => j.status === 'processing') ? true : undefined), 10_000, 'two running imports');
    const third = mine[2]!;
    const putBackAt = Date.now();
    expect(await worker(eventOf(a.accountId, third.id))).toEqual({ batchItemFailures: [] });
    expect((await ok<Job>('imports-get', { id: third.id }, a)).status).toBe('queued');

    // B's import is not behind A's: it runs at once.
    expect(await worker(eventOf(b.accountId, theirs.id))).toEqual({ batchItemFailures: [] });
    expect(await ok<Job>('imports-get', { id: theirs.id }, b)).toMatchObject({ status: 'completed', processed_rows: 1 });

    // The put-back message comes again after DEFER_SECONDS (and not before).
    const again = await waitFor(() => deliveriesOf(third.id)[1], (DEFER_SECONDS + 10) * 1000, 'the put-back message');
    expect(again.at - putBackAt).toBeGreaterThanOrEqual(DEFER_SECONDS * 1000 - 500);

    // A's running imports end and give their places back: the waiting third is woken at once (its
    // message sent again without waiting for a put-back), once, and runs.
    open();
    const releasedAt = Date.now();
    expect(await Promise.all(running)).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    const woken = await waitFor(() => deliveriesOf(third.id)[2], DEFER_SECONDS * 1000, 'the woken message');
    expect(woken.at - releasedAt).toBeLessThan(DEFER_SECONDS * 1000);
    expect(await worker(eventOf(a.accountId, third.id))).toEqual({ batchItemFailures: [] });
    expect(await ok<Job>('imports-get', { id: third.id }, a)).toMatchObject({ status: 'completed', processed_rows: 1 });
  }, 60_000);

  it('takes and gives back places with the grants the export, index-build and erasure workers have (a message of a job that is gone is dropped, not failed)', async () => {
    const a = newAccount();
    const exportWorker = asFunction(functionByName('exportWorker')!, exportHandler());
    const indexWorker = asFunction(functionByName('indexBuildWorker')!, indexBuildHandler());
    const one = (body: Record<string, string>) => ({ Records: [{ messageId: 'm', body: JSON.stringify({ account_id: a.accountId, ...body }) }] }) as unknown as SQSEvent;
    expect(await exportWorker(one({ export_id: 'gone' }))).toEqual({ batchItemFailures: [] });
    expect(await indexWorker(one({ build_id: 'gone' }))).toEqual({ batchItemFailures: [] });
    const erasureWorker = asFunction(functionByName('erasureWorker')!, erasureHandler());
    expect(await erasureWorker(one({ erasure_id: 'gone' }))).toEqual({ batchItemFailures: [] });
  });
});
