import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { exportHandler } from '../../functions/exports/worker.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalExports, startLocalExports } from '../../local/exports.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { type StreamPoller, startStreamPoller } from '../../local/stream-poller.js';
import { type RecordChange, toRecordChange } from '../../shared/domain/record-change.js';
import { randomUUID } from 'node:crypto';
import { getExportItem, insertExport, markExportActive } from '../../shared/db/exports.js';
import { exportKeyOf, fileUpload } from '../../shared/exports/storage.js';
import { recoverExports } from '../../shared/exports/recover.js';
import { type ExportWorkerDeps, MAX_EXPORT_ATTEMPTS } from '../../shared/exports/worker.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { startTestStream } from '../helpers/stream.js';

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
interface ExportRec extends Rec {
  object_type: string;
  filters: Record<string, unknown>;
  status: string;
  total_rows: number | null;
  processed_rows: number;
  download_url: string | null;
  expires_at: string | null;
  failure_reason: string;
}
interface ImportRec extends Rec {
  status: string;
  processed_rows: number;
  created_count: number;
  updated_count: number;
  error_count: number;
  unmapped_columns: string[];
  upload_url?: string;
}

/** The worker's settings for the next export (tests inject crashes and progress probes). */
let deps: ExportWorkerDeps = {};
let queue: LocalQueue;
let imports: LocalImports;
let exportsLocal: LocalExports;
let poller: StreamPoller;
let stream: StreamPoller;
const changes: RecordChange[] = [];


beforeAll(async () => {
  queue = await startLocalQueue('crm-webhook-deliveries');
  imports = await startLocalImports(queue.endpoint, { visibilityTimeoutSeconds: 1 });
  exportsLocal = await startLocalExports(queue.endpoint, { handler: (event) => asFunction(functionByName('exportWorker')!, exportHandler(deps))(event), visibilityTimeoutSeconds: 1 });
  // The record changes' path as `npm start` runs it (search entries, for the search filter).
  stream = await startTestStream({ awsEndpoint: queue.endpoint });
  // And every record change the stream carries (a reader of its own).
  poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: process.env.TABLE_NAME!,
    intervalMs: 25,
    handler: async (event: DynamoDBStreamEvent) => {
      for (const r of event.Records) {
        const c = toRecordChange(r);
        if (c) changes.push(c);
      }
    },
  });
});

afterAll(async () => {
  await poller?.stop();
  await stream?.stop();
  await exportsLocal?.stop();
  await imports?.stop();
  await queue?.stop();
});

beforeEach(() => {
  deps = {};
});

const FINISHED = ['completed', 'failed'];
/** Rows of the large export: enough for two 5 MiB parts with the long notes and bio below. */
const ROWS = 300;

async function waitFor<T extends { status: string }>(op: string, auth: Auth, id: string, until: (r: T) => boolean = (r) => FINISHED.includes(r.status) || r.status === 'canceled', ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await ok<T>(op, { id }, auth);
    if (until(r)) return r;
    if (Date.now() > deadline) throw new Error(`${op} ${id} still ${r.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function exportOf(auth: Auth, body: Record<string, unknown>): Promise<ExportRec> {
  const created = await ok<ExportRec>('exports-create', body, auth);
  expect(created).toMatchObject({ status: 'queued', processed_rows: 0, total_rows: null, download_url: null, expires_at: null, failure_reason: '' });
  return waitFor<ExportRec>('exports-get', auth, created.id);
}

/** Downloads the file of a completed export with plain fetch (the presigned GET). */
async function download(job: ExportRec): Promise<{ bytes: Buffer; text: string; rows: string[][]; header: string[]; records: Record<string, string>[] }> {
  expect(job.status).toBe('completed');
  const res = await fetch(job.download_url!);
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const rows = parse(bytes, { bom: true, relax_column_count: false }) as string[][];
  const header = rows[0]!;
  const records = rows.slice(1).map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]!])));
  return { bytes, text, rows, header, records };
}

async function allOf(auth: Auth, op: string, body: Record<string, unknown> = {}): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok<{ items: Rec[]; next_cursor: string }>(op, { ...body, limit: 100, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor || undefined;
  } while (cursor);
  return out;
}

async function batchCreate(auth: Auth, family: string, items: Record<string, unknown>[], size = 50): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    const out = await ok<{ results: Array<{ ok: boolean; error?: unknown }> }>(`${family}-batch-create`, { items: items.slice(i, i + size) }, auth);
    const bad = out.results.find((x) => !x.ok);
    if (bad) throw new Error(`batch create failed: ${JSON.stringify(bad)}`);
  }
}

/** Imports a file through the presigned upload (files larger than the inline limit), as a user would. */
async function importFile(auth: Auth, objectType: string, bytes: Buffer): Promise<ImportRec> {
  const job = await ok<ImportRec>('imports-create', { object_type: objectType, file_name: 'export.csv' }, auth);
  const put = await fetch(job.upload_url!, { method: 'PUT', body: bytes });
  expect(put.status).toBe(200);
  await ok('imports-start', { id: job.id }, auth);
  return waitFor<ImportRec>('imports-get', auth, job.id, (r) => ['completed', 'failed', 'canceled'].includes(r.status), 120_000);
}

const mineSince = (auth: Auth, from: number) => changes.slice(from).filter((c) => c.accountId === auth.accountId);

describe('exports', () => {
  it('a 300-contact export (hostile cells, custom fields, company_domain, several parts) re-imports with zero errors and zero changes', async () => {
    const auth = newAccount();
    const companies: Rec[] = [];
    for (let i = 0; i < 5; i++) companies.push(await ok<Rec>('companies-create', { name: `Co ${i}`, domain: `co${i}.example` }, auth));
    const tier = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'select', options: ['gold', '=silver', '-bronze'] }, auth);
    const score = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Score', field_type: 'number' }, auth);
    const vip = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'VIP', field_type: 'boolean' }, auth);
    const since = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Since', field_type: 'date' }, auth);
    const langs = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Langs', field_type: 'multi_select', options: ['en', 'fr', '@de'] }, auth);
    const note = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Formula, "quoted"', field_type: 'text' }, auth);
    const bio = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Bio', field_type: 'text' }, auth);
    const source = await ok<Rec>('sources-create', { name: 'Fair' }, auth);
    // Cells a spreadsheet would run, and every kind of quoting; notes and a bio long enough (~19 KB
    // a row) that 300 rows need two parts (> 5 MiB): the multipart path without thousands of rows.
    const hostile = ['=HYPERLINK("http://evil.example","x")', '+1 555 0100', '-2+3', '@SUM(A1)', "'=already quoted", "'plain apostrophe", 'comma, "quote"\r\nnew line'];
    const filler = 'x'.repeat(9_500);
    const bioText = 'b'.repeat(9_000);
    const items = Array.from({ length: ROWS }, (_, i) => ({
      first_name: i % 7 === 0 ? hostile[i % hostile.length]! : `First${i}`,
      last_name: hostile[(i + 3) % hostile.length]!,
      email: `person${i}@example.com`,
      phone: i % 2 ? '+1 (555) 123-4567' : '',
      job_title: i % 3 ? 'Engineer, "senior"' : '',
      notes: `${hostile[i % hostile.length]}\n${filler}`,
      tags: i % 4 ? ['-minus', '@at', 'plain'] : [],
      company_id: i % 6 ? companies[i % 5]!.id : null,
      source_id: i % 9 === 0 ? source.id : null,
      custom_fields: {
        [tier.id]: ['gold', '=silver', '-bronze'][i % 3],
        [score.id]: i % 5 === 0 ? -i - 0.5 : i,
        [vip.id]: i % 2 === 0,
        ...(i % 3 ? { [since.id]: '2026-01-31' } : {}),
        [langs.id]: i % 2 ? ['@de', 'en'] : ['fr'],
        [note.id]: hostile[(i + 1) % hostile.length],
        [bio.id]: bioText,
      },
    }));
    // 12 at a time: 12 contacts of ~19 KB stay under the 256 KiB body limit.
    await batchCreate(auth, 'contacts', items, 12);
    const before = await allOf(auth, 'contacts-list');
    expect(before).toHaveLength(ROWS);

    let probed: ExportRec | undefined;
    deps = {
      afterPage: async ({ rows }) => {
        if (rows === 200) probed = await waitFor<ExportRec>('exports-get', auth, job0.id, () => true);
      },
    };
    const job0 = await ok<ExportRec>('exports-create', { object_type: 'contacts' }, auth);
    const job = await waitFor<ExportRec>('exports-get', auth, job0.id);
    // Progress while it ran: processing, rows counted, no file yet.
    expect(probed).toMatchObject({ status: 'processing', download_url: null, expires_at: null });
    expect(probed!.processed_rows).toBeGreaterThanOrEqual(0);
    expect(probed!.processed_rows).toBeLessThanOrEqual(200);
    expect(job).toMatchObject({ status: 'completed', total_rows: ROWS, processed_rows: ROWS, failure_reason: '', object_type: 'contacts', filters: {} });
    expect(job.download_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/crm-imports\/exports\/.+X-Amz-Expires=900.*X-Amz-Signature=/);
    const expiresIn = Date.parse(job.expires_at!) - Date.now();
    expect(expiresIn).toBeGreaterThan(14 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(15 * 60_000);

    const file = await download(job);
    expect(file.bytes.length).toBeGreaterThan(5 * 1024 * 1024); // more than one part
    expect([...file.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(file.text.indexOf('\r\n')).toBeGreaterThan(0);
    expect(file.header).toEqual([
      'first_name', 'last_name', 'email', 'phone', 'company_id', 'job_title', 'address', 'city', 'state', 'zip_code', 'country', 'notes', 'owner_id', 'tags', 'source_id',
      'company_domain', 'owner_name', 'custom:Tier', 'custom:Score', 'custom:VIP', 'custom:Since', 'custom:Langs', 'custom:Formula, "quoted"', 'custom:Bio',
      'id', 'created_at', 'updated_at',
    ]);
    expect(file.records).toHaveLength(ROWS);
    // Newest first, as the list; every record once.
    expect(file.records.map((r) => r.id)).toEqual(before.map((c) => c.id));
    const byId = new Map(before.map((c) => [c.id, c]));
    for (const row of file.records) {
      const c = byId.get(row.id!)!;
      const i = Number(String(c.email).slice(6, -12));
      expect(row.email).toBe(c.email);
      expect(row.created_at).toBe(c.created_at);
      expect(row.updated_at).toBe(c.updated_at);
      expect(row.company_domain).toBe(c.company_id ? `co${i % 5}.example` : '');
      expect(row.tags).toBe(i % 4 ? "'-minus;@at;plain" : '');
      expect(row['custom:Score']).toBe(i % 5 === 0 ? `'${-i - 0.5}` : String(i));
      expect(row['custom:VIP']).toBe(String(i % 2 === 0));
      expect(row['custom:Langs']).toBe(i % 2 ? "'@de;en" : 'fr');
    }
    // Formula injection: a hostile cell gets exactly one leading ' (one more for a value that already had one before a formula character).
    const hostileRow = file.records.find((r) => r.email === 'person0@example.com')!;
    expect(hostileRow.first_name).toBe(`'${hostile[0]}`);
    expect(hostileRow.last_name).toBe(`'${hostile[3]}`);
    expect(hostileRow['custom:Tier']).toBe('gold');
    expect(file.records.find((r) => r.email === 'person28@example.com')!.first_name).toBe(`'${hostile[0]}`);
    expect(file.records.find((r) => r.email === 'person1@example.com')!.last_name).toBe(`''=already quoted`);
    expect(file.records.find((r) => r.email === 'person2@example.com')!.last_name).toBe(`'plain apostrophe`);
    expect(file.records.find((r) => r.email === 'person1@example.com')!['custom:Tier']).toBe("'=silver");
    expect(file.records.find((r) => r.email === 'person3@example.com')!.last_name).toBe('comma, "quote"\r\nnew line');
    // RFC 4180: the quoted cell is written with doubled quotes inside quotes.
    expect(file.text).toContain('"comma, ""quote""\r\nnew line"');
    expect(file.text).toContain('"Engineer, ""senior"""');

    // Re-import (upsert): zero errors, nothing created, and nothing written (no change, no event, same updated_at).
    await poller.drain(180_000);
    const from = changes.length;
    const again = await importFile(auth, 'contacts', file.bytes);
    expect(again).toMatchObject({ status: 'completed', processed_rows: ROWS, error_count: 0, created_count: 0, unmapped_columns: [] });
    // Matched rows holding identical values count as updated, but are not written.
    expect(again.updated_count).toBe(ROWS);
    await poller.drain(60_000);
    expect(mineSince(auth, from)).toEqual([]);
    expect(await allOf(auth, 'contacts-list')).toEqual(before);
  }, 300_000);

  it('companies: columns, filters honoured, and the file re-imports unchanged', async () => {
    const auth = newAccount();
    const region = await ok<Rec>('custom-fields-create', { entity_type: 'company', name: 'Region', field_type: 'text' }, auth);
    await batchCreate(auth, 'companies', [
      { name: 'Acme', domain: 'acme.example', employee_count: 12, annual_revenue: 1_000_00, tags: ['vip', 'emea'], website: 'https://acme.example', custom_fields: { [region.id]: '=EMEA' } },
      { name: '@Globex', domain: 'globex.example', tags: ['vip'], notes: 'line 1\nline 2' },
      { name: 'Initech', domain: 'initech.example', tags: ['emea'] },
    ]);
    const vip = await exportOf(auth, { object_type: 'companies', filters: { tags: ['vip'] } });
    expect(vip).toMatchObject({ status: 'completed', total_rows: 2, filters: { tags: ['vip'] } });
    const file = await download(vip);
    expect(file.header).toEqual([
      'name', 'domain', 'industry', 'notes', 'phone', 'website', 'social_url', 'address', 'city', 'state', 'zip_code', 'country', 'employee_count', 'annual_revenue', 'owner_id', 'tags',
      'owner_name', 'custom:Region', 'id', 'created_at', 'updated_at',
    ]);
    // One batch: the same created_at, so the list orders them by id.
    expect(file.records.map((r) => r.name).sort()).toEqual(["'@Globex", 'Acme']);
    expect(file.records.find((r) => r.name === 'Acme')).toMatchObject({ employee_count: '12', annual_revenue: '100000', tags: 'vip;emea', 'custom:Region': "'=EMEA" });
    await stream.drain(); // search entries: the changes worker's
    const search = await download(await exportOf(auth, { object_type: 'companies', filters: { search: 'initech' } }));
    expect(search.records.map((r) => r.name)).toEqual(['Initech']);

    const before = await allOf(auth, 'companies-list');
    await poller.drain();
    const from = changes.length;
    const all = await download(await exportOf(auth, { object_type: 'companies' }));
    const again = await importFile(auth, 'companies', all.bytes);
    expect(again).toMatchObject({ status: 'completed', error_count: 0, created_count: 0, updated_count: 3, unmapped_columns: [] });
    await poller.drain();
    expect(mineSince(auth, from)).toEqual([]);
    expect(await allOf(auth, 'companies-list')).toEqual(before);
  });

  it('contacts filters (tags, company_id, company_ids, source_ids, search) and an empty result (header only)', async () => {
    const auth = newAccount();
    const a = await ok<Rec>('companies-create', { name: 'A', domain: 'a.example' }, auth);
    const b = await ok<Rec>('companies-create', { name: 'B' }, auth);
    const s = await ok<Rec>('sources-create', { name: 'Web' }, auth);
    await batchCreate(auth, 'contacts', [
      { first_name: 'Ann', email: 'ann@x.example', tags: ['vip'], company_id: a.id },
      { first_name: 'Bob', email: 'bob@x.example', tags: ['vip', 'new'], company_id: b.id, source_id: s.id },
      { first_name: 'Cid', email: 'cid@x.example', source_id: s.id },
    ]);
    const names = async (filters: Record<string, unknown>) => (await download(await exportOf(auth, { object_type: 'contacts', filters }))).records.map((r) => r.first_name).sort();
    expect(await names({ tags: ['vip'] })).toEqual(['Ann', 'Bob']);
    expect(await names({ tags: ['vip', 'new'] })).toEqual(['Bob']);
    expect(await names({ company_id: a.id })).toEqual(['Ann']);
    expect(await names({ company_ids: [a.id, b.id] })).toEqual(['Ann', 'Bob']);
    expect(await names({ source_ids: [s.id] })).toEqual(['Bob', 'Cid']);
    await stream.drain(); // search entries: the changes worker's
    expect(await names({ search: 'cid' })).toEqual(['Cid']);
    const rows = await download(await exportOf(auth, { object_type: 'contacts', filters: { tags: ['nobody'] } }));
    expect(rows.records).toEqual([]);
    expect(rows.header[0]).toBe('first_name');
    const bob = (await download(await exportOf(auth, { object_type: 'contacts', filters: { tags: ['new'] } }))).records[0]!;
    expect(bob).toMatchObject({ company_id: b.id, company_domain: '', source_id: s.id });
  });

  it('projects and activities, with their filters', async () => {
    const auth = newAccount();
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const c1 = await ok<Rec>('contacts-create', { first_name: 'Ann' }, auth);
    const c2 = await ok<Rec>('contacts-create', { first_name: 'Bob' }, auth);
    const stage = await ok<Rec>('custom-fields-create', { entity_type: 'project', name: 'Priority', field_type: 'select', options: ['high', 'low'] }, auth);
    const p1 = await ok<Rec>('projects-create', { name: 'Engine', status: 'open', company_id: co.id, contact_ids: [c1.id, c2.id], amount: 500, tags: ['big'], custom_fields: { [stage.id]: 'high' } }, auth);
    await ok<Rec>('projects-create', { name: 'Loom', status: 'completed' }, auth);
    const projects = await download(await exportOf(auth, { object_type: 'projects', filters: { status: ['open'] } }));
    expect(projects.header).toEqual(['name', 'description', 'status', 'stage', 'amount', 'currency', 'company_id', 'contact_ids', 'start_date', 'due_date', 'pipeline_id', 'stage_id', 'owner_id', 'tags', 'owner_name', 'custom:Priority', 'id', 'created_at', 'updated_at']);
    expect(projects.records).toHaveLength(1);
    expect(projects.records[0]).toMatchObject({ name: 'Engine', status: 'open', amount: '500', company_id: co.id, contact_ids: `${c1.id};${c2.id}`, tags: 'big', 'custom:Priority': 'high', id: p1.id });

    await ok<Rec>('activities-create', { type: 'task', subject: '-call back', contact_ids: [c1.id], due_at: '2026-12-01T10:00:00.000Z' }, auth);
    await ok<Rec>('activities-create', { type: 'note', subject: 'hello', body: 'a\nb' }, auth);
    const tasks = await download(await exportOf(auth, { object_type: 'activities', filters: { types: ['task'], contact_id: c1.id } }));
    expect(tasks.header).toEqual(['type', 'subject', 'body', 'occurred_at', 'due_at', 'completed', 'direction', 'duration_seconds', 'contact_ids', 'company_id', 'project_id', 'assignee_id', 'assignee_name', 'id', 'created_at', 'updated_at']);
    expect(tasks.records).toHaveLength(1);
    expect(tasks.records[0]).toMatchObject({ type: 'task', subject: "'-call back", completed: 'false', contact_ids: c1.id, due_at: '2026-12-01T10:00:00.000Z' });
    const notes = await download(await exportOf(auth, { object_type: 'activities', filters: { completed: false, types: ['note'] } }));
    expect(notes.records.map((r) => r.body)).toEqual(['a\nb']);
  });

  it('rejects bad bodies and filters with the list rules, as exports.* 400 codes naming the path', async () => {
    const auth = newAccount();
    const code = async (body: unknown) => {
      const r = await invoke('exports-create', body, auth);
      return [r.status, r.body.error?.code, r.body.error?.details?.[0]?.path];
    };
    expect(await code({})).toEqual([400, 'exports.invalid_request', 'object_type']);
    expect(await code({ object_type: 'sources' })).toEqual([400, 'exports.invalid_request', 'object_type']);
    expect(await code({ object_type: 'contacts', extra: 1 })).toEqual([400, 'exports.invalid_request', 'extra']);
    expect(await code({ object_type: 'contacts', filters: [] })).toEqual([400, 'exports.invalid_request', 'filters']);
    expect(await code({ object_type: 'contacts', filters: null })).toEqual([400, 'exports.invalid_request', 'filters']);
    expect(await code({ object_type: 'contacts', filters: 'vip' })).toEqual([400, 'exports.invalid_request', 'filters']);
    expect(await code({ object_type: 'contacts', filters: { tags: 'vip' } })).toEqual([400, 'exports.invalid_request', 'filters.tags']);
    expect(await code({ object_type: 'contacts', filters: { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } })).toEqual([400, 'exports.invalid_request', 'filters.tags']);
    expect(await code({ object_type: 'contacts', filters: { company_id: 'nope' } })).toEqual([400, 'exports.invalid_request', 'filters.company_id']);
    expect(await code({ object_type: 'contacts', filters: { cursor: 'x' } })).toEqual([400, 'exports.invalid_request', 'filters.cursor']);
    expect(await code({ object_type: 'contacts', filters: { limit: 10 } })).toEqual([400, 'exports.invalid_request', 'filters.limit']);
    expect(await code({ object_type: 'companies', filters: { source_ids: [] } })).toEqual([400, 'exports.invalid_request', 'filters.source_ids']);
    expect(await code({ object_type: 'projects', filters: { status: ['shipped'] } })).toEqual([400, 'exports.invalid_request', 'filters.status.0']);
    expect(await code({ object_type: 'activities', filters: { completed: 'yes' } })).toEqual([400, 'exports.invalid_request', 'filters.completed']);
    expect(await code({ object_type: 'activities', filters: { search: 'x' } })).toEqual([400, 'exports.invalid_request', 'filters.search']);
    expect((await invoke('exports-get', { id: 'nope' }, auth)).body.error?.code).toBe('exports.invalid_id');
    expect((await invoke('exports-get', {}, auth)).body.error?.code).toBe('exports.invalid_request');
    expect((await invoke('exports-list', { limit: 0 }, auth)).body.error?.code).toBe('exports.invalid_request');
    expect((await invoke('exports-list', { cursor: 'garbage' }, auth)).body.error?.code).toBe('exports.invalid_cursor');
  });

  it('exports-list pages newest first; another account sees nothing of them', async () => {
    const auth = newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await exportOf(auth, { object_type: 'companies' })).id);
    const first = await ok<{ items: ExportRec[]; next_cursor: string }>('exports-list', { limit: 2 }, auth);
    expect(first.items.map((x) => x.id)).toEqual([ids[2], ids[1]]);
    expect(first.items.every((x) => x.status === 'completed' && typeof x.download_url === 'string' && x.expires_at)).toBe(true);
    const second = await ok<{ items: ExportRec[]; next_cursor: string }>('exports-list', { limit: 2, cursor: first.next_cursor }, auth);
    expect(second).toMatchObject({ next_cursor: '' });
    expect(second.items.map((x) => x.id)).toEqual([ids[0]]);

    const other = newAccount();
    expect((await ok<{ items: ExportRec[] }>('exports-list', {}, other)).items).toEqual([]);
    expect((await invoke('exports-get', { id: ids[0] }, other)).body.error?.code).toBe('exports.not_found');
    expect((await invoke('exports-list', { cursor: first.next_cursor }, other)).body.error?.code).toBe('exports.invalid_cursor');
  });

  it('a worker that crashes mid-export: the next attempt writes the whole file again; never a truncated file marked completed', async () => {
    const auth = newAccount();
    await batchCreate(auth, 'companies', Array.from({ length: 250 }, (_, i) => ({ name: `C${i}`, domain: `c${i}.example` })));
    let crashes = 0;
    const seen: ExportRec[] = [];
    deps = {
      afterPage: async ({ rows }) => {
        if (rows === 100 && crashes < 2) {
          crashes++;
          seen.push(await waitFor<ExportRec>('exports-get', auth, created.id, () => true));
          throw new Error('worker crashed');
        }
      },
    };
    const created = await ok<ExportRec>('exports-create', { object_type: 'companies' }, auth);
    const job = await waitFor<ExportRec>('exports-get', auth, created.id);
    expect(crashes).toBe(2);
    expect(seen.every((s) => s.status === 'processing' && s.download_url === null)).toBe(true);
    expect(job).toMatchObject({ status: 'completed', total_rows: 250, processed_rows: 250 });
    expect((await getExportItem(auth.accountId, job.id))?.attempts).toBe(3);
    const file = await download(job);
    expect(file.records).toHaveLength(250);
    expect(new Set(file.records.map((r) => r.id)).size).toBe(250);
  });

  it('a job that keeps crashing fails with a reason after its attempts, without a download', async () => {
    const auth = newAccount();
    await ok('companies-create', { name: 'Only' }, auth);
    deps = {
      afterPage: () => {
        throw new Error('worker crashed');
      },
    };
    const job = await exportOf(auth, { object_type: 'companies' });
    expect(job).toMatchObject({ status: 'failed', download_url: null, expires_at: null, total_rows: null });
    expect(job.failure_reason).toContain(`interrupted ${MAX_EXPORT_ATTEMPTS} times`);
  });

  it('local restart: a job left processing by a dead process (lease held, upload unfinished, message lost) is queued again by recovery and written whole', async () => {
    const auth = newAccount();
    await ok('companies-create', { name: 'Kept' }, auth);
    const id = randomUUID();
    const key = exportKeyOf(auth.accountId, id);
    const now = new Date().toISOString();
    // What a process that died mid-export leaves: the job processing under its lease, a multipart upload with a part, no queue message.
    const uploadId = await fileUpload.start(key);
    await fileUpload.part(key, uploadId, 1, Buffer.from('\uFEFFname\r\nTrunc'));
    await insertExport({
      id, account_id: auth.accountId, created_by: auth.userId, object_type: 'companies', filters: {}, status: 'processing', total_rows: null, processed_rows: 1,
      failure_reason: '', created_at: now, updated_at: now, completed_at: null, object_key: key, upload_id: uploadId, attempts: 1, lease_owner: 'dead-process', lease_until: Date.now() + 600_000,
    });
    await markExportActive(auth.accountId, id);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ok<ExportRec>('exports-get', { id }, auth)).status).toBe('processing');

    expect((await recoverExports({ releaseLeases: true })).requeued).toBeGreaterThanOrEqual(1);
    const job = await waitFor<ExportRec>('exports-get', auth, id);
    expect(job).toMatchObject({ status: 'completed', total_rows: 1, processed_rows: 1 });
    expect((await getExportItem(auth.accountId, id))?.attempts).toBe(2);
    expect((await download(job)).records.map((r) => r.name)).toEqual(['Kept']);
    // The dead attempt's upload was aborted.
    await expect(fileUpload.part(key, uploadId, 2, Buffer.from('x'))).rejects.toThrow();
    // A second recovery pass clears the marker of the finished job.
    expect((await recoverExports()).cleared).toBeGreaterThanOrEqual(1);
  });

  it('with a data directory, a completed multipart upload (an export file) is kept on disk and served again after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exports-objects-'));
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const body = Buffer.concat([Buffer.alloc(5 * 1024 * 1024, 'a'), Buffer.from('tail')]);
    const first = await startLocalQueue('q', { objectDir: dir });
    const s3 = new S3Client({ endpoint: first.endpoint, forcePathStyle: true, region: 'us-east-1', credentials });
    try {
      await s3.send(new CreateBucketCommand({ Bucket: 'b' }));
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'b', Key: 'exports/x.csv' }));
      const p1 = await s3.send(new UploadPartCommand({ Bucket: 'b', Key: 'exports/x.csv', UploadId, PartNumber: 1, Body: body.subarray(0, 5 * 1024 * 1024) }));
      const p2 = await s3.send(new UploadPartCommand({ Bucket: 'b', Key: 'exports/x.csv', UploadId, PartNumber: 2, Body: body.subarray(5 * 1024 * 1024) }));
      await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'b', Key: 'exports/x.csv', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.ETag }] } }));
    } finally {
      s3.destroy();
      await first.stop();
    }
    const second = await startLocalQueue('q', { objectDir: dir });
    const again = new S3Client({ endpoint: second.endpoint, forcePathStyle: true, region: 'us-east-1', credentials });
    try {
      const got = await again.send(new GetObjectCommand({ Bucket: 'b', Key: 'exports/x.csv' }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    } finally {
      again.destroy();
      await second.stop();
    }
  });
});
