/**
 * The `batches` section of `npm run bench` (contract §13): 100 contacts created by one
 * `contacts-batch-create` against 100 `contacts-create` calls, and 100 upserts (half of them
 * matching an existing contact by email) by one `contacts-batch-upsert` against what a client does
 * without it (look the email up with `contacts-list`, then `contacts-update` or `contacts-create`).
 * Calls go through the handlers in this process (no HTTP: that favours the single calls, which
 * would pay it 100 or 200 times). Write units are what AWS bills: transactions at 2 × each item's
 * KB (DynamoDB Local under-reports them), BatchWriteItem and UpdateItem as reported.
 *
 * Alone: `npx tsx bench/batch.ts [rounds]` (default 3; the median round is reported).
 */
import { pathToFileURL } from 'node:url';
import { invokeOperation } from '../local/invoke.js';
import type { LocalStack } from '../local/runtime.js';
import { type CapacityUsage, measureCapacity } from '../shared/db/capacity.js';
import type { AuthContext } from '../shared/http/operation.js';

export interface BatchRow {
  name: string;
  records: number;
  wall_ms: number;
  records_per_s: number;
  wcu_per_record: number;
  rcu_per_record: number;
}

const N = 100;
const round = (n: number) => Math.round(n * 100) / 100;
/** Billed write units: transactions as AWS bills them (estimated from item sizes), every other write as DynamoDB reported it. */
const billed = (u: CapacityUsage, transactional: boolean) => (transactional ? u.transactWcuBilled : u.wcu + u.transactWcuBilled);

async function call(op: string, body: unknown, auth: AuthContext): Promise<Record<string, unknown>> {
  const r = await invokeOperation(op, body, auth);
  if (!r.body.ok) throw new Error(`${op}: ${JSON.stringify(r.body.error)}`);
  return r.body.result as Record<string, unknown>;
}

async function timed(name: string, fn: () => Promise<void>, transactional: boolean): Promise<BatchRow> {
  const t = performance.now();
  const { usage } = await measureCapacity(fn);
  const ms = performance.now() - t;
  return { name, records: N, wall_ms: Math.round(ms), records_per_s: round((N / ms) * 1000), wcu_per_record: round(billed(usage, transactional) / N), rcu_per_record: round(usage.rcu / N) };
}

async function round1(): Promise<BatchRow[]> {
  const auth: AuthContext = { accountId: crypto.randomUUID(), userId: crypto.randomUUID() };
  const company = await call('companies-create', { name: 'Bench Co', domain: 'bench.example' }, auth);
  const source = await call('sources-create', { name: 'Bench source' }, auth);
  let n = 0;
  const body = (email = `bench${n}@example.com`) => ({
    first_name: 'Bench', last_name: `Person${n++}`, email, phone: '+1 555 0100', tags: ['tag-1', 'tag-2', 'tag-3', 'tag-4', 'tag-5'], company_id: company.id, source_id: source.id,
  });

  const rows: BatchRow[] = [];
  rows.push(await timed('100 × contacts-create', async () => {
    for (let i = 0; i < N; i++) await call('contacts-create', body(), auth);
  }, true));
  rows.push(await timed('contacts-batch-create of 100', async () => {
    await call('contacts-batch-create', { items: Array.from({ length: N }, () => body()) }, auth);
  }, false));

  // Upserts: half of the emails exist (created above), half are new; matches change their job title.
  const upserts = (tag: string) => Array.from({ length: N }, (_, i) => (i % 2 === 0 ? { email: `bench${i}@example.com`, job_title: `${tag} ${i}` } : body(`${tag}-new${i}@example.com`)));
  const singles = upserts('single');
  rows.push(await timed('100 upserts as contacts-list + contacts-update/-create', async () => {
    for (const item of singles) {
      const found = (await call('contacts-list', { search: item.email, limit: 1 }, auth)) as { items: Array<{ id: string }> };
      if (found.items[0]) await call('contacts-update', { id: found.items[0].id, job_title: (item as { job_title: string }).job_title }, auth);
      else await call('contacts-create', item, auth);
    }
  }, false));
  rows.push(await timed('contacts-batch-upsert of 100 (50 match)', async () => {
    await call('contacts-batch-upsert', { items: upserts('batch') }, auth);
  }, false));
  return rows;
}

export async function benchBatches(stack: LocalStack, rounds = 3, log: (...a: unknown[]) => void = () => undefined): Promise<{ rows: BatchRow[]; create_speedup: number; upsert_speedup: number }> {
  const all: BatchRow[][] = [];
  for (let r = 0; r < rounds; r++) {
    all.push(await round1());
    log(`batch round ${r + 1}/${rounds} done`);
    await stack.poller.drain(10 * 60_000);
  }
  // The median round by its batch-create time.
  const rows = [...all].sort((a, b) => a[1]!.wall_ms - b[1]!.wall_ms)[Math.floor(all.length / 2)]!;
  return {
    rows,
    create_speedup: round(rows[1]!.records_per_s / rows[0]!.records_per_s),
    upsert_speedup: round(rows[3]!.records_per_s / rows[2]!.records_per_s),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { startLocalStack } = await import('../local/runtime.js');
  const { table } = await import('./stats.js');
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  const stack = await startLocalStack({ port: 0 });
  try {
    const out = await benchBatches(stack, Number(process.argv[2] ?? 3), (...a) => console.error('[bench]', ...a));
    console.log(table(out.rows as unknown as Record<string, unknown>[]));
    console.log(JSON.stringify({ create_speedup: out.create_speedup, upsert_speedup: out.upsert_speedup }));
  } finally {
    await stack.stop();
  }
  process.exit(0);
}
