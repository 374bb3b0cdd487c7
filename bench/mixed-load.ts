/**
 * `npm run bench:mixed [-- rows]`: two accounts on one local stack (issue 24, "Hostile input" 3).
 *
 * Account A imports `rows` contacts (default 20,000) through the API (imports-create → PUT →
 * imports-start) with a webhook endpoint whose receiver is dead (a closed port on 127.0.0.1),
 * so every created contact raises a delivery that fails and is retried. Account B meanwhile
 * does ordinary reads over HTTP (contacts-get, contacts-list, companies-list, a page of its
 * timeline), one request at a time as a user's screen would. B's latency is measured idle
 * (before the import) and loaded (while A's import runs and its deliveries fail), with the
 * event-loop delay of the process (local mode runs the API, the stream worker, the delivery
 * worker and the import worker in this one Node process; DynamoDB Local is a Java process).
 *
 * Writes bench-mixed-load.json and prints a table. Only 127.0.0.1 is contacted.
 * Target (docs/performance.md "Mixed load"): B's p99 loaded within 2× its idle p99.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { freePort } from '../local/dynamo.js';
import { startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { percentile, table } from './stats.js';

const ROWS = Number(process.argv[2] ?? 20_000);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
const log = (...a: unknown[]) => console.error('[bench:mixed]', ...a);

// Count the failed-attempt log lines (failure-log.ts; WARN goes to stderr) instead of printing them.
let failureLines = 0;
const FAILURE = /webhook attempt failed| more failures? of endpoint /;
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream) as (c: string | Uint8Array, ...r: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!FAILURE.test(text)) return write(chunk, ...rest);
    failureLines += text.split('\n').filter((l) => FAILURE.test(l)).length;
    return true;
  }) as typeof stream.write;
}

// As npm start: the workers in their own thread unless CRM_LOCAL_WORKERS=main.
const workersInThread = (process.env.CRM_LOCAL_WORKERS ?? 'thread') !== 'main';
const stack = await startLocalStack({ port: 0, workersInThread });
const round = (n: number) => Math.round(n * 10) / 10;

async function api<T = Record<string, unknown>>(token: string, op: string, body: unknown): Promise<T> {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result?: T; error?: unknown };
  if (!json.ok) throw new Error(`${op} failed (${res.status}): ${JSON.stringify(json.error)}`);
  return json.result!;
}

try {
  const a = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  const b = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });

  // ---- B: an ordinary account (3 companies, 300 contacts, a timeline).
  const companies = (await api<{ results: Array<{ record: { id: string } }> }>(b, 'companies-batch-create', { items: ['Acme', 'Globex', 'Initech'].map((name) => ({ name })) })).results.map((r) => r.record.id);
  const contactIds: string[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const items = Array.from({ length: 100 }, (_, i) => ({ first_name: `Reader${batch * 100 + i}`, last_name: 'Bee', email: `reader${batch * 100 + i}@b.example`, company_id: companies[i % 3], tags: [`t${i % 5}`] }));
    contactIds.push(...(await api<{ results: Array<{ record: { id: string } }> }>(b, 'contacts-batch-create', { items })).results.map((r) => r.record.id));
  }
  await api(b, 'activities-batch-create', { items: Array.from({ length: 30 }, (_, i) => ({ type: 'note', subject: `note ${i}`, contact_ids: [contactIds[0]] })) });
  await stack.poller.drain(120_000);
  log(`account B: ${contactIds.length} contacts`);

  // B's reads, one at a time; each sample is one request's wall time.
  const READS: Array<[string, () => unknown]> = [
    ['contacts-get', () => ({ id: contactIds[Math.floor(Math.random() * contactIds.length)] })],
    ['contacts-list', () => ({ limit: 25 })],
    ['contacts-list', () => ({ company_id: companies[Math.floor(Math.random() * 3)], limit: 25 })],
    ['companies-list', () => ({})],
    ['activities-list', () => ({ contact_id: contactIds[0], limit: 25 })],
  ];
  const reads = async (until: () => boolean) => {
    const samples: number[] = [];
    for (let i = 0; !until(); i++) {
      const [op, body] = READS[i % READS.length]!;
      const t = performance.now();
      await api(b, op, body());
      samples.push(performance.now() - t);
    }
    return samples;
  };
  const loopDelay = () => {
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    return () => {
      h.disable();
      return { p50: round(h.percentile(50) / 1e6), p99: round(h.percentile(99) / 1e6), max: round(h.max / 1e6) };
    };
  };

  // ---- idle
  // warm-up
  for (let i = 0; i < 50; i++) await api(b, READS[i % READS.length]![0], READS[i % READS.length]![1]());
  let stopLoop = loopDelay();
  const idleEnd = performance.now() + IDLE_SECONDS * 1000;
  const idle = await reads(() => performance.now() > idleEnd);
  const idleLoop = stopLoop();
  log(`idle: ${idle.length} reads, p50 ${percentile(idle, 50)} ms, p99 ${percentile(idle, 99)} ms`);

  // ---- A: a dead receiver and a 20,000-row import.
  const deadPort = await freePort();
  await api(a, 'webhooks-create', { url: `http://127.0.0.1:${deadPort}/hook`, events: ['contact.created', 'contact.updated'] });
  const file = join(mkdtempSync(join(tmpdir(), 'crm-mixed-')), 'a.csv');
  const lines = ['First Name,Last Name,Email,Phone,Tags'];
  for (let i = 0; i < ROWS; i++) lines.push(`Importer${i},Ay,importer${i}@a${i % 40}.example,+1 555 ${String(1_000_000 + i).slice(1)},t${i % 7};u${i % 3}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const job = await api<{ id: string; upload_url: string }>(a, 'imports-create', { object_type: 'contacts', file_name: 'a.csv' });
  await new Promise<void>((resolve, reject) => {
    const body = `${lines.join('\n')}\n`;
    const req = request(new URL(job.upload_url), { method: 'PUT', headers: { 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`upload: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
  const importStart = performance.now();
  await api(a, 'imports-start', { id: job.id });
  let done = false;
  let status = { status: 'queued', processed_rows: 0, created_count: 0 };
  const watcher = (async () => {
    for (let last = 0; !done; ) {
      status = await api(a, 'imports-get', { id: job.id });
      if (['completed', 'failed', 'canceled'].includes(status.status)) done = true;
      if (performance.now() - last > 15_000) {
        log(`import: ${status.processed_rows}/${ROWS} rows`);
        last = performance.now();
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  stopLoop = loopDelay();
  const loaded = await reads(() => done);
  const loadedLoop = stopLoop();
  await watcher;
  const importSeconds = (performance.now() - importStart) / 1000;
  if (status.status !== 'completed') throw new Error(`import ended ${status.status}`);

  const figures = {
    rows: ROWS,
    cpus: (await import('node:os')).cpus().length,
    load_average_at_end: (await import('node:os')).loadavg().map(round),
    import_seconds: round(importSeconds),
    import_rows_per_s: round(ROWS / importSeconds),
    failed_attempt_log_lines: failureLines,
    b_idle: { reads: idle.length, p50_ms: percentile(idle, 50), p99_ms: percentile(idle, 99), event_loop_delay_ms: idleLoop },
    b_loaded: { reads: loaded.length, p50_ms: percentile(loaded, 50), p99_ms: percentile(loaded, 99), event_loop_delay_ms: loadedLoop },
    p99_ratio: round(percentile(loaded, 99) / percentile(idle, 99)),
    p50_ratio: round(percentile(loaded, 50) / percentile(idle, 50)),
    workers: workersInThread ? 'thread' : 'main thread',
  };
  writeFileSync(workersInThread ? 'bench-mixed-load.json' : 'bench-mixed-load-main-thread.json', `${JSON.stringify(figures, null, 2)}\n`);
  console.log(
    table([
      { phase: 'B idle', reads: idle.length, p50_ms: figures.b_idle.p50_ms, p99_ms: figures.b_idle.p99_ms, loop_p99_ms: idleLoop.p99, loop_max_ms: idleLoop.max },
      { phase: `B while A imports ${ROWS}`, reads: loaded.length, p50_ms: figures.b_loaded.p50_ms, p99_ms: figures.b_loaded.p99_ms, loop_p99_ms: loadedLoop.p99, loop_max_ms: loadedLoop.max },
    ]),
  );
  console.log(`p99 loaded/idle ${figures.p99_ratio}× (target ≤ 2×); import ${figures.import_seconds} s (${figures.import_rows_per_s} rows/s); failed-attempt log lines ${failureLines}`);
} finally {
  await stack.stop();
}
