/**
 * Exports a list as a CSV file through the API (docs/imports.md, "Exports"):
 *
 *   CRM_TOKEN=crm_… npm run export -- contacts --out people.csv [--filters '{"tags":["vip"]}'] [--url http://127.0.0.1:3000]
 *
 * Creates the export (typed client), shows a progress bar until the job ends, then downloads the
 * file from its presigned `download_url` as a stream (never whole in memory). Exit code 0 when
 * the file was written, 1 when the export failed, 2 on bad arguments.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createClient } from '../client/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    filters: { type: 'string', default: '{}' },
    url: { type: 'string', default: process.env.CRM_URL ?? 'http://127.0.0.1:3000' },
    token: { type: 'string', default: process.env.CRM_TOKEN ?? process.env.TOKEN },
  },
});

const TYPES = ['contacts', 'companies', 'projects', 'activities'] as const;
const usage = `usage: CRM_TOKEN=crm_… npm run export -- ${TYPES.join('|')} --out <file.csv> [--filters '{"tags":["vip"]}'] [--url http://127.0.0.1:3000]`;
const [objectType] = positionals;
let filters: Record<string, unknown> = {};
try {
  filters = JSON.parse(values.filters!) as Record<string, unknown>;
} catch {
  console.error(`--filters is not JSON: ${values.filters}`);
  process.exit(2);
}
if (!TYPES.includes(objectType as (typeof TYPES)[number]) || !values.out || !values.token || typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
  console.error(usage);
  process.exit(2);
}

const fmt = (n: number) => n.toLocaleString('en-US');
const SPIN = ['#.........', '.#........', '..#.......', '...#......', '....#.....', '.....#....', '......#...', '.......#..', '........#.', '.........#'];

/** The total is known once the job completes; until then the bar moves to show the job is alive. */
function bar(status: string, tick: number): string {
  if (status === 'completed') return `[${'#'.repeat(30)}] 100%`;
  return `[${SPIN[tick % SPIN.length]!.repeat(3)}]    `;
}

async function main() {
  const crm = createClient({ baseUrl: values.url!, token: values.token! });
  const created = await crm.exports.create({ object_type: objectType as 'contacts', filters }, { idempotencyKey: crypto.randomUUID() });
  console.log(`export ${created.id}: ${objectType}${Object.keys(filters).length ? ` where ${JSON.stringify(filters)}` : ''}`);
  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastLine = '';
  for (let tick = 0; ; tick++) {
    const job = await crm.exports.get({ id: created.id });
    const rate = job.processed_rows / Math.max(0.001, (Date.now() - started) / 1000);
    const line = `${bar(job.status, tick)} ${fmt(job.processed_rows)}${job.total_rows === null ? '' : `/${fmt(job.total_rows)}`} rows · ${fmt(Math.round(rate))} rows/s · ${job.status}`;
    if (tty) process.stderr.write(`\r${line}\x1b[K`);
    else if (line.replace(/^\[[^\]]*\]/, '') !== lastLine.replace(/^\[[^\]]*\]/, '')) console.error(line);
    lastLine = line;
    if (job.status === 'failed') {
      if (tty) process.stderr.write('\n');
      console.log(`failed: ${job.failure_reason}`);
      process.exitCode = 1;
      return;
    }
    if (job.status === 'completed' && job.download_url) {
      if (tty) process.stderr.write('\n');
      const res = await fetch(job.download_url);
      if (!res.ok || !res.body) throw new Error(`download failed: HTTP ${res.status}`);
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(values.out!));
      console.log(`completed: ${fmt(job.total_rows ?? 0)} rows written to ${values.out} (the link was valid until ${job.expires_at})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
