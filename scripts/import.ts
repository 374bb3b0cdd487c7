/**
 * Imports a CSV file through the API (docs/imports.md):
 *
 *   CRM_TOKEN=crm_… npm run import -- contacts people.csv [--mode create] [--url http://127.0.0.1:3000]
 *
 * Creates the import (typed client), uploads the file to its presigned URL as a stream (never
 * read whole), starts it, shows a progress bar until the job ends, then prints the counts and
 * the first row errors. Exit code 0 when the import completed, 1 when it failed or was canceled.
 */
import { createReadStream, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '../client/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'upsert' },
    url: { type: 'string', default: process.env.CRM_URL ?? 'http://127.0.0.1:3000' },
    token: { type: 'string', default: process.env.CRM_TOKEN ?? process.env.TOKEN },
    errors: { type: 'string', default: '10' },
  },
});

const usage = 'usage: CRM_TOKEN=crm_… npm run import -- contacts|companies <file.csv> [--mode upsert|create] [--url http://127.0.0.1:3000] [--errors 10]';
const [objectType, file] = positionals;
if ((objectType !== 'contacts' && objectType !== 'companies') || !file || (values.mode !== 'upsert' && values.mode !== 'create') || !values.token) {
  console.error(usage);
  process.exit(2);
}

/** PUTs the file to the presigned URL as a stream with its Content-Length (S3 takes no chunked upload). */
function upload(url: string, path: string, size: number): Promise<void> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, { method: 'PUT', headers: { 'content-length': String(size) } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`upload failed: HTTP ${res.statusCode} ${body.slice(0, 300)}`))));
    });
    req.on('error', reject);
    createReadStream(path).on('error', reject).pipe(req);
  });
}

const fmt = (n: number) => n.toLocaleString('en-US');

function bar(done: number, total: number | null, width = 30): string {
  if (!total) return `[${' '.repeat(width)}]   …`;
  const filled = Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor((done / total) * 100)).padStart(3)}%`;
}

async function main() {
  const crm = createClient({ baseUrl: values.url!, token: values.token! });
  const size = statSync(file!).size;
  const created = await crm.imports.create({ object_type: objectType as 'contacts', mode: values.mode as 'upsert', file_name: basename(file!) }, { idempotencyKey: crypto.randomUUID() });
  console.log(`import ${created.id}: uploading ${basename(file!)} (${fmt(size)} bytes)`);
  await upload(created.upload_url!, file!, size);
  await crm.imports.start({ id: created.id });

  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastLine = '';
  for (;;) {
    const job = await crm.imports.get({ id: created.id });
    const rate = job.processed_rows / Math.max(0.001, (Date.now() - started) / 1000);
    const line = `${bar(job.processed_rows, job.total_rows)} ${fmt(job.processed_rows)}/${job.total_rows === null ? '?' : fmt(job.total_rows)} rows · ${fmt(job.created_count)} created · ${fmt(job.updated_count)} updated · ${fmt(job.error_count)} errors · ${fmt(Math.round(rate))} rows/s · ${job.status}`;
    if (tty) process.stderr.write(`\r${line}\x1b[K`);
    else if (line !== lastLine) console.error(line);
    lastLine = line;
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'canceled') {
      if (tty) process.stderr.write('\n');
      console.log(`${job.status}: ${fmt(job.total_rows ?? 0)} rows, ${fmt(job.created_count)} created, ${fmt(job.updated_count)} updated, ${fmt(job.error_count)} errors`);
      if (job.failure_reason) console.log(`failure: ${job.failure_reason}`);
      if (job.unmapped_columns.length) console.log(`ignored columns: ${job.unmapped_columns.join(', ')}`);
      const max = Number(values.errors);
      if (job.error_count > 0 && max > 0) {
        const page = await crm.imports.errors({ import_id: job.id, limit: Math.min(100, max) });
        console.log(`first row errors (all: imports-errors { "import_id": "${job.id}" }):`);
        for (const e of page.items) console.log(`  row ${e.row_number}${e.column ? ` [${e.column}]` : ''} ${e.code}: ${e.message}${e.value ? ` (${JSON.stringify(e.value)})` : ''}`);
      }
      process.exitCode = job.status === 'completed' ? 0 : 1;
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
