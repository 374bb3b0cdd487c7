/**
 * Upserts are atomic per key (contract §13): concurrent batch upserts, and upsert imports racing
 * them, of the same new emails or domains create at most one record per key (without case);
 * every other item updates it. Plain creates of an email that exists stay allowed, and an upsert
 * matches the newest of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importHandler as importWorkerHandler } from '../../functions/imports/worker.js';
import { asFunction } from '../../local/iam.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { invoke, newAccount, ok } from '../helpers/api.js';

const importHandler = (deps?: Parameters<typeof importWorkerHandler>[0]) => asFunction(functionByName('importWorker')!, importWorkerHandler(deps));

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
type ItemResult = { index: number; ok: boolean; action?: string; record?: Rec; error?: { code: string } };
type Results = { results: ItemResult[] };

// Thousands of writes: a DynamoDB Local of this file's own.

let queue: LocalQueue;
let imports: LocalImports;
beforeAll(async () => {
  queue = await startLocalQueue('crm-webhook-deliveries');
  imports = await startLocalImports(queue.endpoint, { handler: (event) => importHandler({ chunkSize: 10 })(event), visibilityTimeoutSeconds: 1 });
  // A fresh DynamoDB Local (a JVM) is several times slower for its first thousand requests: warm it.
  const warm = newAccount();
  for (const family of ['contacts', 'companies']) {
    const items = Array.from({ length: 50 }, (_, i) => (family === 'contacts' ? { email: `warm${i}@example.com`, first_name: 'W' } : { domain: `warm${i}.example`, name: 'W' }));
    await Promise.all([1, 2].map(() => ok(`${family}-batch-upsert`, { items }, warm)));
  }
}, 120_000);
afterAll(async () => {
  await imports?.stop();
  await queue?.stop();
});

const BATCHES = 6;
const KEYS = 30;

async function all(auth: Auth, family: string): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok<{ items: Rec[]; next_cursor: string }>(`${family}-list`, { limit: 100, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor || undefined;
  } while (cursor);
  return out;
}

/** Each key's spelling differs from batch to batch (the match is without case). */
const spelled = (key: string, batch: number) => (batch % 2 ? key.toUpperCase() : key);

const FAMILIES = [
  { family: 'contacts', field: 'email', keyOf: (i: number) => `person${i}@example.com`, item: (key: string) => ({ email: key, first_name: 'Same', last_name: 'Person' }) },
  { family: 'companies', field: 'domain', keyOf: (i: number) => `company${i}.example`, item: (key: string) => ({ domain: key, name: 'Same Co' }) },
] as const;

describe.each(FAMILIES)('concurrent upserts of $family', ({ family, field, keyOf, item }) => {
  it(`${BATCHES} parallel batches of the same ${KEYS} new keys create exactly one record per key`, async () => {
    const auth = newAccount();
    const keys = Array.from({ length: KEYS }, (_, i) => keyOf(i));
    const replies = await Promise.all(
      Array.from({ length: BATCHES }, (_, batch) => invoke<Results>(`${family}-batch-upsert`, { items: keys.map((k) => item(spelled(k, batch))) }, auth)),
    );
    for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const results = replies.flatMap((r) => r.body.result!.results);
    for (const x of results) expect(x.ok, JSON.stringify(x)).toBe(true);
    // One `created` per key across every batch; the others found it (as they would write it: `unchanged`).
    const created = results.filter((x) => x.action === 'created');
    expect(created).toHaveLength(KEYS);
    expect(new Set(created.map((x) => String(x.record![field]).toLowerCase())).size).toBe(KEYS);
    expect(results.filter((x) => x.action !== 'created').every((x) => x.action === 'updated' || x.action === 'unchanged')).toBe(true);
    const records = await all(auth, family);
    expect(records).toHaveLength(KEYS);
    expect(new Set(records.map((r) => String(r[field]).toLowerCase()))).toEqual(new Set(keys));
    // Every item's answer names the one record of its key.
    const idOf = new Map(records.map((r) => [String(r[field]).toLowerCase(), r.id]));
    for (const x of results) expect(x.record!.id).toBe(idOf.get(String(x.record![field]).toLowerCase()));
  }, 180_000);
});

describe('upserts next to other writes of the key', () => {
  it('an upsert import racing batch upserts of the same new emails: one record per email', async () => {
    const auth = newAccount();
    const emails = Array.from({ length: KEYS }, (_, i) => `row${i}@example.com`);
    const csv = 'first_name,email,job_title\r\n' + emails.map((e, i) => `Row${i},${e.toUpperCase()},Imported`).join('\r\n') + '\r\n';
    const job = await ok<Rec>('imports-create', { object_type: 'contacts', csv, mode: 'upsert' }, auth);
    const replies = await Promise.all(Array.from({ length: 4 }, (_, batch) => invoke<Results>('contacts-batch-upsert', { items: emails.map((email) => ({ email, first_name: `Batch${batch}` })) }, auth)));
    for (const r of replies) expect(r.status, JSON.stringify(r.body)).toBe(200);
    let done: Rec;
    for (const deadline = Date.now() + 60_000; ; ) {
      done = await ok<Rec>('imports-get', { id: job.id }, auth);
      if (['completed', 'failed', 'canceled'].includes(String(done.status))) break;
      if (Date.now() > deadline) throw new Error(`import still ${String(done.status)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(done).toMatchObject({ status: 'completed', error_count: 0, processed_rows: KEYS });
    const records = await all(auth, 'contacts');
    expect(records.map((r) => String(r.email).toLowerCase()).sort()).toEqual([...emails].sort());
    // Each row's write landed on that one record: created by whichever came first, then updated.
    const batchCreated = replies.flatMap((r) => r.body.result!.results).filter((x) => x.action === 'created').length;
    expect(Number(done.created_count) + batchCreated).toBe(KEYS);
    expect(records.every((r) => r.job_title === 'Imported')).toBe(true);
  }, 180_000);

  it('a plain create of an existing email is allowed; an upsert matches the newest record, and a trashed one no longer', async () => {
    const auth = newAccount();
    const first = await ok<Rec>('contacts-batch-upsert', { items: [{ email: 'dup@example.com', first_name: 'First' }] }, auth);
    const firstId = (first as unknown as Results).results[0]!.record!.id;
    const second = await ok<Rec>('contacts-create', { email: 'DUP@example.com', first_name: 'Second' }, auth);
    const up = await ok<Results>('contacts-batch-upsert', { items: [{ email: 'dup@example.com', last_name: 'Up' }] }, auth);
    expect(up.results[0]).toMatchObject({ action: 'updated', record: { id: second.id, last_name: 'Up' } });
    // Both trashed: the key is free again, the next upsert creates.
    await ok('contacts-delete', { id: second.id }, auth);
    await ok('contacts-delete', { id: firstId }, auth);
    const again = await ok<Results>('contacts-batch-upsert', { items: [{ email: 'dup@example.com', first_name: 'Third' }] }, auth);
    expect(again.results[0]!.action).toBe('created');
    expect([firstId, second.id]).not.toContain(again.results[0]!.record!.id);
    // A restored record is a record with the key again: the newest (by creation) is matched.
    await ok('contacts-restore', { id: second.id }, auth);
    const last = await ok<Results>('contacts-batch-upsert', { items: [{ email: 'dup@example.com', job_title: 'Matched' }] }, auth);
    expect(last.results[0]).toMatchObject({ action: 'updated', record: { id: again.results[0]!.record!.id, job_title: 'Matched' } });
    expect((await invoke('contacts-get', { id: firstId }, auth)).status).toBe(404);
  });
});
