/**
 * Contract §7: an import that was queued when local mode stopped (its message died with the
 * in-memory queue) is carried out after a restart.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { importHandler as importWorkerHandler } from '../../functions/imports/worker.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { recoverImports } from '../../shared/imports/recover.js';
import { newAccount, ok } from '../helpers/api.js';

const importHandler = (deps?: Parameters<typeof importWorkerHandler>[0]) => asFunction(functionByName('importWorker')!, importWorkerHandler(deps));

type ImportRec = { id: string; status: string; created_count: number; processed_rows: number };

const running: { stop(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const r of running.reverse()) await r.stop();
});

type Handler = NonNullable<NonNullable<Parameters<typeof startLocalImports>[1]>['handler']>;

/** The import queue and worker on `queue` (a fresh queue name: it starts empty, as after a restart). */
async function start(queue: LocalQueue, queueName: string, handler: Handler): Promise<LocalImports> {
  const imports = await startLocalImports(queue.endpoint, { handler, queueName, visibilityTimeoutSeconds: 60 });
  running.push(imports);
  return imports;
}

describe('imports across a restart of local mode', () => {
  it('re-queues a job whose message was lost, and clears the markers of jobs that ended', async () => {
    const auth = newAccount();
    // The object store outlives the restart here (as S3 does deployed); the queue's messages do not.
    const queue = await startLocalQueue('crm-webhook-deliveries');
    running.push(queue);
    // Before the "crash": a worker that never gets to the job.
    const before = await start(queue, 'imports-before', async () => {
      throw new Error('the service is going down');
    });
    const job = await ok<ImportRec>('imports-create', { object_type: 'contacts', csv: 'first_name,email\nAda,ada@restart.example\nBob,bob@restart.example\n' }, auth);
    expect(job.status).toBe('queued');
    await before.stop();

    // After the restart: an empty queue; the recovery pass finds the job and queues it again.
    await start(queue, 'imports-after', (event) => importHandler()(event));
    expect(await recoverImports()).toMatchObject({ requeued: 1 });
    const deadline = Date.now() + 30_000;
    let got = await ok<ImportRec>('imports-get', { id: job.id }, auth);
    while (got.status !== 'completed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      got = await ok<ImportRec>('imports-get', { id: job.id }, auth);
    }
    expect(got, JSON.stringify(got)).toMatchObject({ status: "completed", created_count: 2, processed_rows: 2 });
    // The next pass has nothing to re-queue and removes the ended job's marker.
    expect(await recoverImports()).toEqual({ requeued: 0, cleared: 1 });
    expect(await recoverImports()).toEqual({ requeued: 0, cleared: 0 });
  }, 60_000);
});
