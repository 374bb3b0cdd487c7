/**
 * The `exports` section of `npm run bench` (contract §16): `rows` contacts (seeded straight into
 * the table with the API's item builder, linked to companies with domains) exported through the
 * API as a user would (exports-create → poll exports-get → GET download_url), with the rate in
 * rows per second and the memory of this process (which runs the export worker, the API server
 * and the stream worker of the local stack) while the export runs: its growth over the baseline
 * is what the export itself holds (one page and at most two 5 MiB parts, whatever `rows`).
 *
 * Alone: `npx tsx bench/exports.ts [rows] [--no-stream]` (default 10,000; `--no-stream`: see `stopStream`).
 */
import { pathToFileURL } from 'node:url';
import { issueToken } from '../shared/auth/tokens.js';
import type { LocalStack } from '../local/runtime.js';
import { seedContacts } from './seed.js';

export interface ExportFigures {
  rows: number;
  seconds: number;
  rows_per_s: number;
  file_mb: number;
  /** RSS before the export started (the local stack's own baseline). */
  base_rss_mb: number;
  peak_rss_mb: number;
  /** Peak RSS during the export minus the baseline. */
  rss_growth_mb: number;
  /** Peak V8 heap in use during the export (garbage included), and its growth over the baseline. */
  peak_heap_mb: number;
  heap_growth_mb: number;
}

async function api<T = Record<string, unknown>>(stack: LocalStack, token: string, op: string, body: unknown): Promise<T> {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result?: T; error?: unknown };
  if (!json.ok) throw new Error(`${op} failed: ${JSON.stringify(json.error)}`);
  return json.result!;
}

/**
 * `stopStream`: stop the stream worker after seeding instead of waiting for it to write the
 * seeded contacts' search entries (an export reads no search entry; at 100,000 contacts the wait
 * is most of an hour on two cores). The process then runs nothing but the export.
 */
export async function benchExports(stack: LocalStack, rows: number, log: (...a: unknown[]) => void = console.error, opts: { stopStream?: boolean } = {}): Promise<ExportFigures> {
  const auth = { accountId: crypto.randomUUID(), userId: crypto.randomUUID() };
  const token = await issueToken(auth);
  const companies = [];
  for (let i = 0; i < 10; i++) companies.push({ ...(await api<{ id: string; name: string }>(stack, token, 'companies-create', { name: `Company ${i}`, domain: `company${i}.example` })), ver: 1 });
  const sources = [await api<{ id: string; name: string }>(stack, token, 'sources-create', { name: 'Fair' })];
  for (let done = 0; done < rows; done += 10_000) await seedContacts(auth.accountId, auth.userId, Math.min(10_000, rows - done), { companies, sources }, 7, done);
  if (opts.stopStream) {
    log(`exports: seeded ${rows} contacts; stopping the stream worker`);
    await stack.poller.stop();
  } else {
    log(`exports: seeded ${rows} contacts; waiting for the stream worker…`);
    await stack.poller.drain(60 * 60_000);
  }
  global.gc?.();

  const base = process.memoryUsage();
  let peak = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 50);
  const t = performance.now();
  const created = await api<{ id: string }>(stack, token, 'exports-create', { object_type: 'contacts' });
  let job: { status: string; processed_rows: number; total_rows: number | null; download_url: string | null; failure_reason: string };
  for (let last = performance.now(); ; ) {
    job = await api(stack, token, 'exports-get', { id: created.id });
    if (job.status === 'completed' || job.status === 'failed') break;
    if (performance.now() - last > 10_000) {
      log(`export: ${job.processed_rows} rows`);
      last = performance.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t) / 1000;
  clearInterval(sampler);
  if (job.status !== 'completed' || job.total_rows !== rows) throw new Error(`export ended ${job.status} with ${job.total_rows}/${rows} rows ${job.failure_reason}`);
  // The file, counted as a stream (its CRLFs: one per row plus the header; quoted cells hold no CRLF here).
  const res = await fetch(job.download_url!);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
  }
  if (lines !== rows + 1) throw new Error(`the file has ${lines} lines, expected ${rows + 1}`);
  const round = (n: number) => Math.round(n * 10) / 10;
  const mb = (n: number) => round(n / 1024 / 1024);
  return {
    rows,
    seconds: round(seconds),
    rows_per_s: round(rows / seconds),
    file_mb: mb(bytes),
    base_rss_mb: mb(base.rss),
    peak_rss_mb: mb(peak),
    rss_growth_mb: mb(peak - base.rss),
    peak_heap_mb: mb(peakHeap),
    heap_growth_mb: mb(peakHeap - base.heapUsed),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { startLocalStack } = await import('../local/runtime.js');
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  const stack = await startLocalStack({ port: 0, smtpPort: 0 });
  try {
    const rows = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000);
    console.log(JSON.stringify(await benchExports(stack, rows, console.error, { stopStream: process.argv.includes('--no-stream') }), null, 2));
  } finally {
    await stack.stop();
  }
}
