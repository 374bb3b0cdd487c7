/**
 * Hostile import files (contract §10): each has one clear outcome — the job fails with a reason
 * and applies nothing, or the bad rows become row errors and the others land — and the service
 * imports an ordinary file afterwards. Big files are generated in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { newAccount, ok } from '../helpers/api.js';

type Auth = ReturnType<typeof newAccount>;
interface ImportRec {
  id: string;
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
type RowError = { row_number: number; column: string; code: string; message: string; value: string };

let queue: LocalQueue;
let imports: LocalImports;
beforeAll(async () => {
  queue = await startLocalQueue('crm-webhook-deliveries');
  imports = await startLocalImports(queue.endpoint, { visibilityTimeoutSeconds: 1 });
});
afterAll(async () => {
  await imports?.stop();
  await queue?.stop();
});

async function waitForImport(auth: Auth, id: string): Promise<ImportRec> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await ok<ImportRec>('imports-get', { id }, auth);
    if (['completed', 'failed', 'canceled'].includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`import ${id} still ${r.status} (${r.processed_rows}/${r.total_rows})`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Uploads the bytes through the job's presigned URL and runs the import to its end. */
async function importFile(auth: Auth, bytes: Buffer | string): Promise<ImportRec> {
  const job = await ok<ImportRec>('imports-create', { object_type: 'contacts' }, auth);
  const res = await fetch(job.upload_url!, { method: 'PUT', body: typeof bytes === 'string' ? Buffer.from(bytes) : bytes });
  expect(res.status).toBe(200);
  await ok('imports-start', { id: job.id }, auth);
  return waitForImport(auth, job.id);
}

const contactCount = async (auth: Auth) => (await ok<{ items: unknown[] }>('contacts-list', { limit: 100 }, auth)).items.length;
const errorsOf = async (auth: Auth, id: string) => (await ok<{ items: RowError[] }>('imports-errors', { import_id: id, limit: 100 }, auth)).items;

/** The service still imports an ordinary file and answers reads. */
async function expectHealthy() {
  const auth = newAccount();
  const job = await importFile(auth, 'first_name,email\nAda,ada@example.com\nGrace,grace@example.com\n');
  expect(job).toMatchObject({ status: 'completed', created_count: 2, error_count: 0 });
  expect(await contactCount(auth)).toBe(2);
}

describe('hostile import files', () => {
  it.each([
    ['Latin-1', Buffer.from('first_name,email\nJos\xe9,jose@example.com\nAda,ada@example.com\n', 'latin1'), /not UTF-8/],
    ['UTF-16 (little-endian, BOM)', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('first_name,email\nAda,ada@example.com\n', 'utf16le')]), /UTF-16/],
    ['UTF-16 (big-endian, BOM)', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('first_name,email\nAda,ada@example.com\n', 'utf16le').swap16()]), /UTF-16/],
    ['NUL bytes', Buffer.from('first_name,email\nA\u0000da,ada@example.com\nGrace,grace@example.com\n'), /NUL/],
    ['unbalanced quotes', Buffer.from('first_name,email\nAda,ada@example.com\n"Grace,grace@example.com\nLinus,linus@example.com\n'), /not valid CSV.*line/],
  ])('%s: the job fails with a clear reason and applies nothing', async (_name, bytes, reason) => {
    const auth = newAccount();
    const job = await importFile(auth, bytes);
    expect(job).toMatchObject({ status: 'failed', processed_rows: 0, created_count: 0 });
    expect(job.failure_reason).toMatch(reason);
    expect(job.failure_reason).not.toMatch(/Error|at \w+ \(|node_modules/);
    expect(await contactCount(auth)).toBe(0);
  });

  it('100,001 rows: refused clearly, nothing applied', async () => {
    const auth = newAccount();
    const rows = Array.from({ length: 100_001 }, (_, i) => `P${i},p${i}@example.com`);
    const job = await importFile(auth, `first_name,email\n${rows.join('\n')}\n`);
    expect(job).toMatchObject({ status: 'failed', processed_rows: 0, created_count: 0, failure_reason: 'the file has more than 100,000 rows' });
    expect(await contactCount(auth)).toBe(0);
  }, 60_000);

  it('a 1 MB cell is one row error; the other rows land', async () => {
    const auth = newAccount();
    const job = await importFile(auth, `first_name,email,notes\nAda,ada@example.com,short\nBob,bob@example.com,"${'x'.repeat(1024 * 1024)}"\nGrace,grace@example.com,\n`);
    expect(job).toMatchObject({ status: 'completed', total_rows: 3, created_count: 2, error_count: 1, failure_reason: '' });
    const [error] = await errorsOf(auth, job.id);
    expect(error).toMatchObject({ row_number: 3, code: 'invalid_value', column: 'notes' });
    expect(error!.value.length).toBeLessThanOrEqual(500);
    expect(await contactCount(auth)).toBe(2);
  }, 60_000);

  it('10,000 columns: the mapped ones are imported, the unmapped list stays bounded', async () => {
    const auth = newAccount();
    const extra = Array.from({ length: 9_998 }, (_, i) => `unknown column number ${i} with a long header`);
    const header = ['first_name', 'email', ...extra].join(',');
    const row = (name: string) => [name, `${name.toLowerCase()}@example.com`, ...extra.map((_, i) => String(i))].join(',');
    const job = await importFile(auth, `${header}\n${row('Ada')}\n${row('Grace')}\n`);
    expect(job).toMatchObject({ status: 'completed', created_count: 2, error_count: 0 });
    expect(job.unmapped_columns.length).toBeGreaterThan(0);
    expect(JSON.stringify(job.unmapped_columns).length).toBeLessThan(50_000);
    expect(job.unmapped_columns[0]).toBe(extra[0]);
    // A row of the wrong width is one row error whose value is cut.
    const short = await importFile(auth, `${header}\n${row('Linus')}\nTim,tim@example.com\n`);
    expect(short).toMatchObject({ status: 'completed', created_count: 1, error_count: 1 });
  }, 60_000);

  it('duplicate headers: the first column of a field is used, the later ones are listed as unmapped', async () => {
    const auth = newAccount();
    const job = await importFile(auth, 'email,First Name,EMAIL,first_name\nada@example.com,Ada,other@example.com,Other\n');
    expect(job).toMatchObject({ status: 'completed', created_count: 1, unmapped_columns: ['EMAIL', 'first_name'] });
    const [c] = (await ok<{ items: Array<Record<string, unknown>> }>('contacts-list', {}, auth)).items;
    expect(c).toMatchObject({ email: 'ada@example.com', first_name: 'Ada' });
  });

  afterAll(async () => {
    await expectHealthy();
  }, 60_000);
});
