/**
 * The `imports` section of `npm run bench`: a generated CSV of `rows` contacts imported through
 * the API as a user would (imports-create → PUT upload_url → imports-start → poll imports-get),
 * beside the rate of writing the same items straight to DynamoDB Local with BatchWriteItem, in
 * the same run. Peak memory is the RSS of this process, which runs the import worker (and the
 * API server and stream worker) of the local stack; DynamoDB Local is a separate Java process.
 *
 * Alone: `npx tsx bench/imports.ts [rows]` (default 2,000).
 */
import { createReadStream, createWriteStream, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { issueToken } from '../shared/auth/tokens.js';
import { familyOf } from '../shared/domain/records/family.js';
import { contactEntity } from '../shared/schemas/entities/index.js';
import { csvRecords } from '../shared/imports/worker.js';
import type { LocalStack } from '../local/runtime.js';
import { writeItems } from './seed.js';

export interface ImportFigures {
  rows: number;
  rows_per_s: number;
  raw_rows_per_s: number;
  peak_rss_mb: number;
  /** RSS before the import started (the local stack's own baseline). */
  base_rss_mb: number;
  /** Peak V8 heap in use during the import (what the process's JavaScript held, garbage included). */
  peak_heap_mb: number;
  /** The raw rate when the stream worker's work for those items (search entries, events) is counted too, as it is during the import. */
  raw_with_stream_rows_per_s: number;
  seconds: number;
  file_mb: number;
  /** The reading path alone on a 50 MB, 100,000-row file (benchParse). */
  parse_50mb: ParseFigures;
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Frances', 'John'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Allen', 'Backus'];

const row = (i: number) => ({
  first_name: `${FIRST[i % 10]}${i}`,
  last_name: LAST[(i * 7) % 10]!,
  email: `person${i}@example${i % 50}.com`,
  phone: `+1 555 ${String(1_000_000 + i).slice(1)}`,
  job_title: 'Engineer',
  city: 'London',
  tags: [`tag-${i % 20}`, `tag-${(i * 3) % 20}`].filter((t, k, a) => a.indexOf(t) === k),
});

/** The CSV, written line by line (the bench's own memory stays flat too). */
function writeCsv(rows: number): string {
  const file = join(mkdtempSync(join(tmpdir(), 'crm-import-bench-')), `contacts-${rows}.csv`);
  const lines = ['First Name,Last Name,Email,Phone,Job Title,City,Tags'];
  for (let i = 0; i < rows; i++) {
    const r = row(i);
    lines.push([r.first_name, r.last_name, r.email, r.phone, r.job_title, r.city, r.tags.join(';')].join(','));
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function api<T = Record<string, unknown>>(stack: LocalStack, token: string, op: string, body: unknown): Promise<T> {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result?: T; error?: unknown };
  if (!json.ok) throw new Error(`${op} failed: ${JSON.stringify(json.error)}`);
  return json.result!;
}

function upload(url: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { method: 'PUT', headers: { 'content-length': String(statSync(file).size) } }, (res) => {
      res.resume();
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`upload: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

/**
 * Items of `rows` contacts exactly as the import writes them (record + index entries), straight
 * to the table: the write rate, and the rate once the stream worker has also handled them.
 */
async function rawRate(stack: LocalStack, rows: number): Promise<{ write: number; withStream: number }> {
  const accountId = crypto.randomUUID();
  const userId = crypto.randomUUID();
  const store = familyOf(contactEntity).store;
  const empty = { company_id: null, company_name: '', source_id: null, source_name: '', notes: '', address: '', state: '', zip_code: '', country: '', custom_fields: {} };
  const items: Record<string, unknown>[] = [];
  const now = new Date().toISOString();
  for (let i = 0; i < rows; i++) {
    const { item, entries } = store.newItems({ accountId, userId, fields: { ...empty, ...row(i) } }, now, crypto.randomUUID());
    items.push(...entries, item);
  }
  const t = performance.now();
  await writeItems(items);
  const write = rows / ((performance.now() - t) / 1000);
  await stack.poller.drain(60 * 60_000);
  return { write, withStream: rows / ((performance.now() - t) / 1000) };
}

export interface ParseFigures {
  rows: number;
  file_mb: number;
  seconds: number;
  /** Growth of the process's RSS while the file was read (peak minus before). */
  rss_growth_mb: number;
  peak_heap_mb: number;
}

/**
 * The worker's reading path alone on a 50 MB file of 100,000 rows (a 490-character note each):
 * UTF-8 check and csv-parse over a file stream, as the worker reads the bucket's object. Shows
 * the file is never held in memory: the growth stays far below the file's size.
 */
export async function benchParse(rows = 100_000): Promise<ParseFigures> {
  const file = join(mkdtempSync(join(tmpdir(), 'crm-import-parse-')), 'big.csv');
  const out = createWriteStream(file);
  const note = `"${'Lorem ipsum, dolor "" sit amet\n'.repeat(17).slice(0, 490)}"`;
  out.write('First Name,Last Name,Email,Notes\n');
  for (let i = 0; i < rows; i++) {
    if (!out.write(`${FIRST[i % 10]}${i},${LAST[i % 10]},person${i}@example.com,${note}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const before = process.memoryUsage().rss;
  let peak = before;
  let peakHeap = process.memoryUsage().heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const sampler = setInterval(sample, 50);
  const t = performance.now();
  let count = 0;
  for await (const _ of csvRecords(createReadStream(file))) if (++count % 5_000 === 0) sample();
  clearInterval(sampler);
  if (count !== rows + 1) throw new Error(`parsed ${count} records, expected ${rows + 1}`);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { rows, file_mb: round(statSync(file).size / 1024 / 1024), seconds: round((performance.now() - t) / 1000), rss_growth_mb: round((peak - before) / 1024 / 1024), peak_heap_mb: round(peakHeap / 1024 / 1024) };
}

export async function benchImports(stack: LocalStack, rows: number, log: (...a: unknown[]) => void = console.error): Promise<ImportFigures> {
  const file = writeCsv(rows);
  const auth = { accountId: crypto.randomUUID(), userId: crypto.randomUUID() };
  const token = await issueToken(auth);
  await stack.poller.drain(60 * 60_000);

  const base = process.memoryUsage().rss;
  let peak = base;
  let peakHeap = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 100);
  const created = await api<{ id: string; upload_url: string }>(stack, token, 'imports-create', { object_type: 'contacts', file_name: 'bench.csv' });
  await upload(created.upload_url, file);
  const t = performance.now();
  await api(stack, token, 'imports-start', { id: created.id });
  let job: { status: string; processed_rows: number; created_count: number; error_count: number; total_rows: number | null };
  for (let last = 0; ; ) {
    job = await api(stack, token, 'imports-get', { id: created.id });
    if (['completed', 'failed', 'canceled'].includes(job.status)) break;
    if (performance.now() - last > 10_000) {
      log(`import: ${job.processed_rows}/${job.total_rows ?? '?'} rows`);
      last = performance.now();
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - t) / 1000;
  clearInterval(sampler);
  if (job.status !== 'completed' || job.created_count !== rows) throw new Error(`import ended ${job.status} with ${job.created_count}/${rows} created`);
  log(`imported ${rows} contacts in ${Math.round(seconds)} s; raw BatchWriteItem rate of the same items…`);
  await stack.poller.drain(60 * 60_000);

  // The raw rate on at most 10,000 rows (a rate; the full 100,000 would only take longer).
  const raw = await rawRate(stack, Math.min(rows, 10_000));
  const round = (n: number) => Math.round(n * 10) / 10;
  const mb = (n: number) => round(n / 1024 / 1024);
  return {
    rows,
    rows_per_s: round(rows / seconds),
    raw_rows_per_s: round(raw.write),
    peak_rss_mb: mb(peak),
    base_rss_mb: mb(base),
    peak_heap_mb: mb(peakHeap),
    raw_with_stream_rows_per_s: round(raw.withStream),
    seconds: round(seconds),
    file_mb: round(statSync(file).size / 1024 / 1024),
    parse_50mb: await benchParse(),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { startLocalStack } = await import('../local/runtime.js');
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  const stack = await startLocalStack({ port: 0 });
  try {
    console.log(JSON.stringify(await benchImports(stack, Number(process.argv[2] ?? 2_000)), null, 2));
  } finally {
    await stack.stop();
  }
}
