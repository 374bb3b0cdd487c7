import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importHandler as importWorkerHandler } from '../../functions/imports/worker.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { type StreamPoller, startStreamPoller } from '../../local/stream-poller.js';
import { type RecordChange, toRecordChange } from '../../shared/domain/record-change.js';
import type { ImportWorkerDeps } from '../../shared/imports/worker.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { responseValidator } from '../helpers/openapi-validator.js';

const importHandler = (deps?: Parameters<typeof importWorkerHandler>[0]) => asFunction(functionByName('importWorker')!, importWorkerHandler(deps));

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
interface ImportRec extends Rec {
  status: string;
  total_rows: number | null;
  processed_rows: number;
  created_count: number;
  updated_count: number;
  error_count: number;
  failure_reason: string;
  unmapped_columns: string[];
  upload_url?: string;
}
interface RowError {
  row_number: number;
  column: string;
  code: string;
  message: string;
  value: string;
  created_at: string;
}

/** The worker's settings for the next import (tests inject small chunks and crashes). */
let deps: ImportWorkerDeps = {};
let queue: LocalQueue;
let imports: LocalImports;
let poller: StreamPoller;
const changes: RecordChange[] = [];

beforeAll(async () => {
  queue = await startLocalQueue('crm-webhook-deliveries');
  imports = await startLocalImports(queue.endpoint, { handler: (event) => importHandler(deps)(event), visibilityTimeoutSeconds: 1 });
  // Every record change the stream sees: what raises the webhook events (contact.created, …).
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
  await imports?.stop();
  await queue?.stop();
});

beforeEach(() => {
  deps = {};
});

async function waitForImport(auth: Auth, id: string, until: (r: ImportRec) => boolean = (r) => ['completed', 'failed', 'canceled'].includes(r.status)): Promise<ImportRec> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await ok<ImportRec>('imports-get', { id }, auth);
    if (until(r)) return r;
    if (Date.now() > deadline) throw new Error(`import ${id} still ${r.status} (${r.processed_rows}/${r.total_rows})`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function allErrors(auth: Auth, importId: string): Promise<RowError[]> {
  const out: RowError[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok<{ items: RowError[]; next_cursor: string }>('imports-errors', { import_id: importId, limit: 2, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor || undefined;
  } while (cursor);
  return out;
}

async function allContacts(auth: Auth): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok<{ items: Rec[]; next_cursor: string }>('contacts-list', { limit: 100, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor || undefined;
  } while (cursor);
  return out;
}

const changesOf = (auth: Auth, op: RecordChange['op'], type = 'contact') => changes.filter((c) => c.accountId === auth.accountId && c.op === op && c.type === type);

const importCsv = async (auth: Auth, csv: string, extra: Record<string, unknown> = {}) => {
  const created = await ok<ImportRec>('imports-create', { object_type: 'contacts', csv, ...extra }, auth);
  expect(created.status).toBe('queued');
  return waitForImport(auth, created.id);
};

describe('imports', () => {
  it('maps headers, upserts by email without case, links companies by domain, fills custom fields and records row errors', async () => {
    const auth = newAccount();
    const acme = await ok<Rec>('companies-create', { name: 'Acme', domain: 'Acme.COM' }, auth);
    const tier = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'select', options: ['gold', 'silver'] }, auth);
    const score = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Score', field_type: 'number' }, auth);
    const existing = await ok<Rec>('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'ADA@example.com', phone: '1' }, auth);
    await poller.drain();
    const before = changes.length;

    const csv =
      '\uFEFFFirst Name,last-name,E_MAIL,Job Title,tags,Company Domain,custom:tier,Custom: SCORE,Favourite Colour,notes\r\n' +
      'Ada,,ada@EXAMPLE.com,Countess,vip; math ;vip,acme.com,gold,3.5,blue,"first line\nsecond line, with comma and ""quotes"""\r\n' + // row 2: updates Ada
      'Grace,Hopper,grace@navy.mil,,navy,,silver,,red,\r\n' + // row 3: created
      'Bad,Email,not-an-email,,,,,,,\r\n' + // row 4: invalid_value (E_MAIL)
      ',Nameless,nameless@example.com,,,,,,,\r\n' + // row 5: missing_required
      'Grace,Again,GRACE@navy.mil,,,,,,,\r\n' + // row 6: duplicate_in_file
      'Linus,,linus@example.com,,,nowhere.example,,,,\r\n' + // row 7: invalid_company
      'Tim,,tim@example.com,,,,platinum,,,\r\n' + // row 8: invalid_custom_fields
      'Short,row\r\n' + // row 9: wrong_column_count
      '\r\n' + // blank line: skipped
      'Alan,Turing,,,,ACME.com,,,,\r\n'; // row 11: created, no email
    const job = await importCsv(auth, csv, { file_name: 'people.csv' });

    expect(job).toMatchObject({
      status: 'completed',
      object_type: 'contacts',
      mode: 'upsert',
      file_name: 'people.csv',
      total_rows: 9,
      processed_rows: 9,
      created_count: 2,
      updated_count: 1,
      error_count: 6,
      failure_reason: '',
      unmapped_columns: ['Favourite Colour'],
      account_id: auth.accountId,
      created_by: auth.userId,
    });
    expect(job.started_at).toMatch(/Z$/);
    expect(job.completed_at).toMatch(/Z$/);

    const errors = await allErrors(auth, job.id);
    expect(errors.map((e) => [e.row_number, e.code, e.column])).toEqual([
      [4, 'invalid_value', 'E_MAIL'],
      [5, 'missing_required', 'First Name'],
      [6, 'duplicate_in_file', 'E_MAIL'],
      [7, 'invalid_company', 'Company Domain'],
      [8, 'invalid_custom_fields', 'custom:tier'],
      [9, 'wrong_column_count', ''],
    ]);
    expect(errors[0]!.value).toBe('not-an-email');
    expect(errors[2]!.value).toBe('GRACE@navy.mil');
    expect(errors[3]!.value).toBe('nowhere.example');
    expect(errors.every((e) => e.message.length > 0 && e.created_at.endsWith('Z'))).toBe(true);

    const contacts = await allContacts(auth);
    expect(contacts).toHaveLength(3);
    const ada = await ok<Rec>('contacts-get', { id: existing.id }, auth);
    expect(ada).toMatchObject({
      first_name: 'Ada',
      last_name: 'Lovelace', // empty cell: unchanged
      phone: '1',
      job_title: 'Countess',
      tags: ['vip', 'math'],
      company_id: acme.id,
      company_name: 'Acme',
      notes: 'first line\nsecond line, with comma and "quotes"',
      custom_fields: { [tier.id]: 'gold', [score.id]: 3.5 },
    });
    const grace = contacts.find((c) => c.first_name === 'Grace')!;
    expect(grace).toMatchObject({ last_name: 'Hopper', email: 'grace@navy.mil', tags: ['navy'], custom_fields: { [tier.id]: 'silver' }, company_id: null });
    const alan = contacts.find((c) => c.first_name === 'Alan')!;
    expect(alan).toMatchObject({ company_id: acme.id, company_name: 'Acme', email: '' });

    // Every created or updated record raised its usual change (hence its webhook event).
    await poller.drain();
    const mine = changes.slice(before).filter((c) => c.accountId === auth.accountId);
    expect(mine.filter((c) => c.op === 'created').map((c) => c.id).sort()).toEqual([grace.id, alan.id].sort());
    expect(mine.filter((c) => c.op === 'updated').map((c) => c.id)).toEqual([existing.id]);

    // The same values again: matched and counted as updated, but nothing is written (no event).
    const again = await importCsv(auth, 'first_name,email,job_title\nAda,Ada@Example.com,Countess\n');
    expect(again).toMatchObject({ status: 'completed', created_count: 0, updated_count: 1, error_count: 0 });
    await poller.drain();
    expect(changes.slice(before).filter((c) => c.accountId === auth.accountId && c.op === 'updated')).toHaveLength(1);
  });

  it('create mode always creates; companies upsert by domain; an import of the same file again updates instead of duplicating', async () => {
    const auth = newAccount();
    await ok<Rec>('contacts-create', { first_name: 'Ada', email: 'ada@example.com' }, auth);
    const job = await importCsv(auth, 'first_name,email\nAda,ADA@example.com\nBob,bob@example.com\nBobby,Bob@Example.com\n', { mode: 'create' });
    expect(job).toMatchObject({ status: 'completed', mode: 'create', created_count: 2, updated_count: 0, error_count: 1 });
    expect((await allErrors(auth, job.id)).map((e) => [e.row_number, e.code])).toEqual([[4, 'duplicate_in_file']]);
    expect((await allContacts(auth)).filter((c) => String(c.email).toLowerCase() === 'ada@example.com')).toHaveLength(2);

    const csv = 'Name,Domain,Employee Count,Annual-Revenue,Website\nAcme,acme.com,120,5000,https://acme.com\nGlobex,globex.com,abc,,\nInitech,,,,ftp://x\n';
    const companies = await ok<ImportRec>('imports-create', { object_type: 'companies', csv }, auth);
    const first = await waitForImport(auth, companies.id);
    expect(first).toMatchObject({ status: 'completed', created_count: 1, updated_count: 0, error_count: 2 });
    expect((await allErrors(auth, first.id)).map((e) => [e.row_number, e.code, e.column])).toEqual([
      [3, 'invalid_value', 'Employee Count'],
      [4, 'invalid_value', 'Website'],
    ]);
    const again = await ok<ImportRec>('imports-create', { object_type: 'companies', csv: 'name,domain,industry\nAcme Inc,ACME.COM,Anvils\n' }, auth);
    expect(await waitForImport(auth, again.id)).toMatchObject({ created_count: 0, updated_count: 1, error_count: 0 });
    const list = await ok<{ items: Rec[] }>('companies-list', {}, auth);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ name: 'Acme Inc', domain: 'acme.com', // matched without case: the stored spelling stays
      industry: 'Anvils', employee_count: 120, annual_revenue: 5000 });
  });

  it('uploads through a presigned URL (curl -T) and starts with imports-start', async () => {
    const auth = newAccount();
    const job = await ok<ImportRec>('imports-create', { object_type: 'contacts', file_name: 'big.csv' }, auth);
    expect(job.status).toBe('awaiting_upload');
    expect(job.total_rows).toBeNull();
    expect(job.upload_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/crm-imports\/imports\/.+X-Amz-Signature=/);
    expect((await invoke('imports-start', { id: job.id }, auth)).body.error?.code).toBe('imports.invalid_request');

    const dir = mkdtempSync(join(tmpdir(), 'imports-'));
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'first_name,email\n' + Array.from({ length: 30 }, (_, i) => `P${i},p${i}@example.com`).join('\n') + '\n');
    const { stdout } = await promisify(execFile)('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-T', file, job.upload_url!]);
    expect(stdout).toBe('200');

    const started = await ok<ImportRec>('imports-start', { id: job.id }, auth);
    expect(started.status).toBe('queued');
    expect((await invoke('imports-start', { id: job.id }, auth)).body.error?.code).toBe('imports.conflict');
    const done = await waitForImport(auth, job.id);
    expect(done).toMatchObject({ status: 'completed', total_rows: 30, processed_rows: 30, created_count: 30, error_count: 0 });
    expect(await allContacts(auth)).toHaveLength(30);
  });

  it('fails a file that is not such a CSV, with a failure_reason, applying nothing', async () => {
    const auth = newAccount();
    const cases = [
      'first_name,email\nAda,ada@example.com\n"Unclosed,bob@example.com\n',
      '',
      'colour,size\nred,2\n',
      'first_name,notes\nAda,"bad "quote" here"\n',
    ];
    for (const csv of cases) {
      const job = await importCsv(auth, csv);
      expect(job.status, csv).toBe('failed');
      expect(job.failure_reason, csv).not.toBe('');
      expect(job.completed_at).toMatch(/Z$/);
    }
    // Not UTF-8: uploaded as bytes.
    const job = await ok<ImportRec>('imports-create', { object_type: 'contacts' }, auth);
    const res = await fetch(job.upload_url!, { method: 'PUT', body: Buffer.from([0x66, 0x69, 0x72, 0x73, 0x74, 0x5f, 0x6e, 0x61, 0x6d, 0x65, 0x0a, 0xff, 0xfe, 0xfd, 0x0a]) });
    expect(res.status).toBe(200);
    await ok('imports-start', { id: job.id }, auth);
    const failed = await waitForImport(auth, job.id);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'the file is not UTF-8 text', processed_rows: 0 });
    expect(await allContacts(auth)).toHaveLength(0);
  });

  it('resumes after a crash between chunks without applying a row twice or losing one', async () => {
    const auth = newAccount();
    // Rows 2..4 update existing contacts; the rest create; one row is an error.
    for (const i of [0, 1, 2]) await ok('contacts-create', { first_name: `Old${i}`, email: `u${i}@example.com` }, auth);
    await poller.drain();
    const rows = Array.from({ length: 23 }, (_, i) => (i === 17 ? 'Broken,not-an-email' : `N${i},u${i}@example.com`));
    let crashes = 0;
    const applied: number[] = [];
    deps = {
      chunkSize: 5,
      afterApply: ({ firstRow }) => {
        applied.push(firstRow);
        // The worker dies after applying the third chunk's rows (12-16), before saving its progress.
        if (firstRow === 12 && crashes === 0) {
          crashes++;
          throw new Error('simulated crash');
        }
      },
    };
    const job = await importCsv(auth, `first_name,email\n${rows.join('\n')}\n`);
    expect(crashes).toBe(1);
    expect(applied).toEqual([2, 7, 12, 12, 17, 22]); // rows 12-16 applied again after the crash, by one worker at a time
    expect(job).toMatchObject({ status: 'completed', total_rows: 23, processed_rows: 23, created_count: 19, updated_count: 3, error_count: 1 });
    expect((await allErrors(auth, job.id)).map((e) => [e.row_number, e.code])).toEqual([[19, 'invalid_value']]);
    const contacts = await allContacts(auth);
    expect(contacts).toHaveLength(3 + 19);
    expect(new Set(contacts.map((c) => c.email)).size).toBe(22);
    expect(contacts.find((c) => c.email === 'u1@example.com')?.first_name).toBe('N1');
    // Each record was created once (the second attempt at chunk 2 found its rows' records).
    await poller.drain();
    expect(changesOf(auth, 'created')).toHaveLength(3 + 19);
    expect(new Set(changesOf(auth, 'created').map((c) => c.id)).size).toBe(22);
    expect(changesOf(auth, 'updated')).toHaveLength(3);
  });

  it('imports-cancel stops before the next chunk; rows already applied stay and are counted', async () => {
    const auth = newAccount();
    let canceled: ImportRec | undefined;
    let id = '';
    deps = {
      chunkSize: 5,
      afterApply: async ({ firstRow }) => {
        if (firstRow === 7) canceled = await ok<ImportRec>('imports-cancel', { id }, auth);
      },
    };
    const created = await ok<ImportRec>('imports-create', { object_type: 'contacts', csv: `first_name\n${Array.from({ length: 30 }, (_, i) => `C${i}`).join('\n')}\n` }, auth);
    id = created.id;
    const job = await waitForImport(auth, id, (r) => r.status === 'canceled' && r.processed_rows === 10);
    expect(canceled?.status).toBe('canceled');
    await imports.worker.drain();
    const final = await ok<ImportRec>('imports-get', { id }, auth);
    expect(final).toMatchObject({ status: 'canceled', processed_rows: 10, created_count: 10, total_rows: 30 });
    expect(final.completed_at).toBe(job.completed_at);
    expect(await allContacts(auth)).toHaveLength(10);

    // Canceling again returns it; a completed import cannot be canceled; an upload-awaiting one can.
    expect((await ok<ImportRec>('imports-cancel', { id }, auth)).status).toBe('canceled');
    const done = await importCsv(auth, 'first_name\nX\n');
    expect((await invoke('imports-cancel', { id: done.id }, auth)).body.error?.code).toBe('imports.conflict');
    const waiting = await ok<ImportRec>('imports-create', { object_type: 'companies' }, auth);
    expect((await ok<ImportRec>('imports-cancel', { id: waiting.id }, auth)).status).toBe('canceled');
    expect((await invoke('imports-start', { id: waiting.id }, auth)).body.error?.code).toBe('imports.conflict');
  });

  it('validates bodies, isolates accounts and paginates imports-list and imports-errors', async () => {
    const auth = newAccount();
    const other = newAccount();
    const bad = async (op: string, body: unknown, code: string, status = 400) => {
      const r = await invoke(op, body, auth);
      expect(r.status, `${op} ${JSON.stringify(body)}`).toBe(status);
      expect(r.body.error?.code).toBe(code);
    };
    await bad('imports-create', {}, 'imports.invalid_request');
    await bad('imports-create', { object_type: 'activities' }, 'imports.invalid_request');
    await bad('imports-create', { object_type: 'contacts', mode: 'merge' }, 'imports.invalid_request');
    await bad('imports-create', { object_type: 'contacts', status: 'queued' }, 'imports.invalid_request');
    await bad('imports-create', { object_type: 'contacts', csv: 'x'.repeat(200_001) }, 'imports.invalid_request');
    await bad('imports-get', {}, 'imports.invalid_request');
    await bad('imports-get', { id: 'nope' }, 'imports.invalid_id');
    await bad('imports-cancel', { id: 'nope' }, 'imports.invalid_id');
    await bad('imports-start', { id: 'nope' }, 'imports.invalid_id');
    await bad('imports-errors', {}, 'imports.invalid_request');
    await bad('imports-errors', { import_id: 'nope' }, 'imports.invalid_id');
    await bad('imports-list', { limit: 0 }, 'imports.invalid_request');
    await bad('imports-list', { cursor: 'garbage' }, 'imports.invalid_cursor');

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await ok<ImportRec>('imports-create', { object_type: 'contacts', file_name: `f${i}.csv` }, auth)).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await ok<{ items: ImportRec[]; next_cursor: string }>('imports-list', { limit: 2, ...(cursor ? { cursor } : {}) }, auth);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor || undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual([...ids].reverse());
    expect((await ok<{ items: ImportRec[] }>('imports-list', {}, other)).items).toEqual([]);
    expect((await invoke('imports-get', { id: ids[0] }, other)).body.error?.code).toBe('imports.not_found');
    expect((await invoke('imports-errors', { import_id: ids[0] }, other)).body.error?.code).toBe('imports.not_found');
    expect((await invoke('imports-cancel', { id: ids[0] }, other)).body.error?.code).toBe('imports.not_found');
    expect((await invoke('imports-start', { id: ids[0] }, other)).body.error?.code).toBe('imports.not_found');

    const job = await importCsv(auth, 'first_name,email\n' + Array.from({ length: 5 }, (_, i) => `,x${i}@example.com`).join('\n') + '\n');
    const page = await ok<{ items: RowError[]; next_cursor: string }>('imports-errors', { import_id: job.id, limit: 3 }, auth);
    expect(page.items.map((e) => e.row_number)).toEqual([2, 3, 4]);
    expect((await invoke('imports-errors', { import_id: ids[0], cursor: page.next_cursor }, auth)).body.error?.code).toBe('imports.invalid_cursor');
    const rest = await ok<{ items: RowError[]; next_cursor: string }>('imports-errors', { import_id: job.id, limit: 3, cursor: page.next_cursor }, auth);
    expect(rest).toMatchObject({ next_cursor: '' });
    expect(rest.items.map((e) => e.row_number)).toEqual([5, 6]);
  });

  it('answers every import operation as the OpenAPI document says (successes and errors)', async () => {
    const auth = newAccount();
    const check = responseValidator();
    const seen = new Set<string>();
    const call = async (op: string, body: unknown, status = 200) => {
      const r = await invoke(op, body, auth);
      expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(status);
      expect(check(op, r.status, r.body), `${op} ${r.status} ${JSON.stringify(r.body)}`).toEqual([]);
      if (status === 200) seen.add(op);
      return r.body.result as ImportRec;
    };
    const waiting = await call('imports-create', { object_type: 'contacts' });
    await call('imports-start', { id: waiting.id }, 400);
    await call('imports-cancel', { id: waiting.id });
    await call('imports-start', { id: waiting.id }, 409);
    const inline = await call('imports-create', { object_type: 'contacts', csv: 'first_name,email,colour\nAda,bad,red\nBob,bob@example.com,blue\n' });
    await waitForImport(auth, inline.id);
    await call('imports-get', { id: inline.id });
    await call('imports-list', { limit: 1 });
    await call('imports-errors', { import_id: inline.id });
    await call('imports-cancel', { id: inline.id }, 409);
    await call('imports-get', { id: '00000000-0000-4000-8000-000000000000' }, 404);
    await call('imports-errors', { import_id: 'x' }, 400);
    const upload = await call('imports-create', { object_type: 'companies' });
    await fetch(upload.upload_url!, { method: 'PUT', body: 'name\nAcme\n' });
    await call('imports-start', { id: upload.id });
    expect([...seen].sort()).toEqual(['imports-cancel', 'imports-create', 'imports-errors', 'imports-get', 'imports-list', 'imports-start']);
  });
});
