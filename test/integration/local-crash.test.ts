/**
 * Contract §7 and §10 in local mode with CRM_DATA_DIR: kill -9 of the whole service, DynamoDB
 * Local's Java process included (it runs in a process group of its own), loses no acknowledged
 * write, and an import killed half-way resumes after the restart and loses no row.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { call, crash, type Service, startService } from '../helpers/local-service.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The test process's own variables stay out of the child's. */
const childEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'].includes(k)));

const started: Service[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) await crash(s).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function service(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const s = await startService({ CRM_DATA_DIR: dataDir, CRM_IMPORT_CHUNK_ROWS: '50', ...env });
  started.push(s);
  return s;
}

const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'crm-crash-'));
  dirs.push(d);
  return d;
};

// The tests are independent (each its own data directory and processes) and mostly wait on them: run at once.
describe.concurrent('local mode after kill -9 of the service and of DynamoDB Local', () => {
  it('keeps every transaction DynamoDB Local acknowledged when its Java process is killed right after (two rounds)', async () => {
    // DynamoDB Local answers a transaction before its commit runs (shared/db/client.ts): without
    // the barrier three rounds in four lost the last acknowledged transaction.
    const dataDir = newDir();
    // Asynchronous: the other test of the file runs meanwhile.
    const run = async (...args: string[]) => (await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'test/helpers/durable-writer.ts'), ...args], { cwd: ROOT, encoding: 'utf8', env: childEnv() })).stdout;
    // The rounds are independent (each its own data directory and Java process): run at once.
    const rounds = await Promise.all(
      [0, 1].map(async (round) => {
        const db = join(dataDir, `round-${round}`);
        const keysFile = join(dataDir, `acked-${round}.json`);
        const keys = JSON.parse(await run('write', db)) as string[];
        expect(keys.length).toBeGreaterThanOrEqual(100);
        writeFileSync(keysFile, JSON.stringify(keys));
        const missing = JSON.parse(await run('check', db, keysFile)) as string[];
        expect(missing, `round ${round}`).toEqual([]);
        return keys.length;
      }),
    );
    console.log(`crash: ${rounds[0]! + rounds[1]!} acknowledged transactions over 2 kills of DynamoDB Local, none missing`);
  }, 480_000);

  // One kill of `npm start` proves both: the creates acknowledged up to the kill, and the imports it interrupted.
  it('keeps every acknowledged create (four parallel loops up to the kill) and resumes an import killed half-way (an uploaded file and an inline csv), losing no row', async () => {
    const dataDir = newDir();
    // Three chunks per file (CRM_IMPORT_CHUNK_ROWS; the product's 200, shared/imports/worker.ts): the kill lands after a first chunk, before the last.
    const ROWS = 150;
    const csvOf = (tag: string) => ['first_name,email', ...Array.from({ length: ROWS }, (_, i) => `P${i},${tag}-${i}@crash.example`)].join('\n') + '\n';
    const startedAt = Date.now();
    const first = await service(dataDir);
    type Job = { id: string; status: string; processed_rows: number; created_count: number; updated_count: number; error_count: number; failure_reason: string; upload_url?: string };
    const uploaded = (await call<Job>(first, 'imports-create', { object_type: 'contacts', file_name: 'file.csv' })).body.result;
    expect((await fetch(uploaded.upload_url!, { method: 'PUT', body: csvOf('file') })).status).toBe(200);
    expect((await call<Job>(first, 'imports-start', { id: uploaded.id })).status).toBe(200);
    const inline = (await call<Job>(first, 'imports-create', { object_type: 'contacts', csv: csvOf('inline') })).body.result;
    // Wait until a job has applied some rows (its first chunk), before either has finished.
    const jobsNow = (): Promise<Job[]> => Promise.all([uploaded.id, inline.id].map(async (id) => (await call<Job>(first, 'imports-get', { id })).body.result));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const jobs = await jobsNow();
      if (jobs.some((j) => j.processed_rows > 0)) break;
      if (Date.now() > deadline) throw new Error(`imports did not start: ${JSON.stringify(jobs)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Then creates in four parallel loops until the kill (the last ones acknowledged just before
    // it), which comes at 50 acknowledgements, while the imports' next chunk is being applied.
    const acked: { id: string; at: number }[] = [];
    let stop = false;
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      for (let i = 0; !stop; i++) {
        const r = await call<{ id: string }>(first, 'contacts-create', { first_name: `crash-${loop}-${i}` }).catch(() => undefined);
        if (r?.status === 200 && !stop) acked.push({ id: r.body.result.id, at: Date.now() });
      }
    });
    while (acked.length < 50) await new Promise((r) => setTimeout(r, 1));
    const jobs = await jobsNow();
    expect(jobs.every((j) => j.status === 'processing' || j.status === 'queued'), JSON.stringify(jobs)).toBe(true);
    console.log(`crash: killing mid-import at ${Date.now() - startedAt} ms`);
    stop = true;
    const killAt = Date.now();
    await crash(first);
    await Promise.allSettled(loops);

    const second = await service(dataDir);
    console.log(`crash: restarted at ${Date.now() - startedAt} ms`);
    const restartedAt = Date.now();
    const missing: string[] = [];
    for (const { id } of acked) if ((await call(second, 'contacts-get', { id })).status !== 200) missing.push(id);
    console.log(`crash: ${acked.length} acknowledged creates, the last ${killAt - acked.at(-1)!.at} ms before the kill; ${missing.length} missing after the restart`);
    expect(missing).toEqual([]);
    for (const job of [uploaded, inline]) {
      let got: Job;
      for (;;) {
        got = (await call<Job>(second, 'imports-get', { id: job.id })).body.result;
        if (got.status !== 'processing' && got.status !== 'queued') break;
        if (Date.now() - restartedAt > 300_000) throw new Error(`import still ${got.status} 300 s after the restart: ${JSON.stringify(got)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(got, JSON.stringify(got)).toMatchObject({ status: 'completed', processed_rows: ROWS, error_count: 0, failure_reason: '' });
      expect(got.created_count + got.updated_count).toBe(ROWS);
    }
    // Every row of both files landed, once.
    const emails: string[] = [];
    let cursor = '';
    do {
      const page = (await call<{ items: { email: string }[]; next_cursor: string }>(second, 'contacts-list', { limit: 100, ...(cursor ? { cursor } : {}) })).body.result;
      // The loops' creates have no email.
      emails.push(...page.items.flatMap((c) => (c.email ? [c.email] : [])));
      cursor = page.next_cursor;
    } while (cursor);
    const expected = ['file', 'inline'].flatMap((tag) => Array.from({ length: ROWS }, (_, i) => `${tag}-${i}@crash.example`));
    expect(emails.length).toBe(expected.length);
    expect(new Set(emails)).toEqual(new Set(expected));
    console.log(`crash: both imports completed ${Date.now() - restartedAt} ms after the restart began`);
    await crash(second);
  }, 600_000);
});
