/**
 * `npm run bench:pipelines [-- --sizes 1000,10000] [--contacts-only | --projects-only]`: the pipeline board and the
 * summaries (contracts §19, §21) at two account sizes on the local stack: read units
 * (ConsumedCapacity), items read and latency of `pipelines-board` (limit 10 and 25), of
 * `projects-summary` by stage (a 30-stage pipeline), status and pipeline, and of
 * `contacts-summary` by owner (50 members owning the contacts in turn) and a page of one owner's
 * contacts (`contacts-list { owner_id, limit: 25 }`); and the write units the
 * changes worker spends to count one stage move (its transaction: the change's marker and the
 * counters it moves). Records are created through `projects-batch-create` (placed in the pipeline's 30
 * stages in turn) and `contacts-batch-create`, and counted by the stream worker before the reads.
 * Each row is also printed on stderr as it is measured.
 * Prints a table; writes bench-pipelines.json.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { invokeOperation } from '../local/invoke.js';
import { startLocalStack } from '../local/runtime.js';
import { measureCapacity } from '../shared/db/capacity.js';
import type { RecordChange } from '../shared/domain/record-change.js';
import { countChanges } from '../shared/domain/summaries.js';
import type { AuthContext } from '../shared/http/operation.js';
import { percentile, table } from './stats.js';

const arg = process.argv.indexOf('--sizes');
const sizes = arg > 0 ? process.argv[arg + 1]!.split(',').map(Number) : [1_000, 10_000];
const contactsOnly = process.argv.includes('--contacts-only');
const projectsOnly = process.argv.includes('--projects-only');
const RUNS = 15;
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.CRM_RATE_LIMIT ??= '0';
const log = (...a: unknown[]) => console.error('[bench:pipelines]', ...a);

const stack = await startLocalStack({ port: 0 });
const auth: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
const round = (x: number) => Math.round(x * 10) / 10;

async function call<T>(op: string, body: unknown): Promise<T> {
  const r = await invokeOperation<T>(op, body, auth);
  if (!r.body.ok) throw new Error(`${op}: ${JSON.stringify(r.body.error)}`);
  return r.body.result as T;
}

interface Pipeline { id: string; stages: { id: string; name: string; probability: number }[] }
const stages = [...Array.from({ length: 28 }, (_, i) => ({ name: `Stage ${i + 1}`, probability: Math.min(99, i * 4) })), { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
const pipeline = await call<Pipeline>('pipelines-create', { name: 'Sales', stages });
const CURRENCIES = ['USD', 'EUR', 'GBP'];

let created = 0;
/** Projects through projects-batch-create (100 a call, two calls at once), each in the next stage, with an amount in one of three currencies. */
async function growTo(size: number) {
  const t = performance.now();
  let next = created;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < size) {
        const from = next;
        next = Math.min(size, next + 100);
        const items = Array.from({ length: next - from }, (_, j) => {
          const i = from + j;
          return { name: `Deal ${i}`, stage_id: pipeline.stages[i % stages.length]!.id, amount: 1000 + ((i * 7919) % 100_000), currency: CURRENCIES[i % 3] };
        });
        const out = await call<{ results: { ok: boolean; error?: unknown }[] }>('projects-batch-create', { items });
        const failed = out.results.find((r) => !r.ok);
        if (failed) throw new Error(`projects-batch-create: ${JSON.stringify(failed.error)}`);
      }
    }),
  );
  created = size;
  log(`created up to ${size} projects in ${Math.round(performance.now() - t)} ms; stream worker counting…`);
  await stack.poller.drain(60 * 60_000);
  log(`counted after ${Math.round(performance.now() - t)} ms`);
}

type Row = Record<string, string | number>;
const rows: Row[] = [];
/** A measured row: kept for the table, and printed at once (a long run's rows survive a later failure). */
const note = (row: Row) => {
  rows.push(row);
  log(JSON.stringify(row));
};

async function measure(name: string, size: number, op: string, body: unknown, check: (result: Record<string, unknown>) => void) {
  const ms: number[] = [];
  let rcu = 0;
  let items = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const { result, usage } = await measureCapacity(() => call<Record<string, unknown>>(op, body));
    ms.push(performance.now() - t);
    check(result);
    rcu = Math.max(rcu, usage.rcu);
    items = Math.max(items, usage.itemsRead);
  }
  note({ read: name, records: size, rcu: round(rcu), items_read: items, p50_ms: round(percentile(ms, 50)), p95_ms: round(percentile(ms, 95)) });
}

for (const size of contactsOnly ? [] : sizes) {
  await growTo(size);
  const counted = (r: Record<string, unknown>) => {
    const total = (r.total as { count: number } | undefined)?.count ?? (r.columns as { count: number }[]).reduce((n, c) => n + c.count, 0);
    if (total !== size) throw new Error(`counted ${total} of ${size} projects`);
  };
  await measure('pipelines-board (30 stages, limit 10)', size, 'pipelines-board', { pipeline_id: pipeline.id }, counted);
  await measure('pipelines-board (30 stages, limit 25)', size, 'pipelines-board', { pipeline_id: pipeline.id, limit: 25 }, counted);
  await measure('projects-summary stage (30 stages)', size, 'projects-summary', { group_by: 'stage', pipeline_id: pipeline.id }, counted);
  await measure('projects-summary status', size, 'projects-summary', { group_by: 'status' }, counted);
  await measure('projects-summary pipeline', size, 'projects-summary', { group_by: 'pipeline' }, counted);
}

// contacts-summary by owner: 50 members owning the contacts in turn (another account than the projects').

const people: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
const owners: string[] = [];
for (let i = 0; i < 50; i++) {
  const r = await invokeOperation<{ id: string }>('members-create', { email: `owner${i}@example.com`, name: `Owner ${String(i).padStart(2, '0')}` }, people);
  owners.push(r.body.result!.id);
}
let contacts = 0;
for (const size of projectsOnly ? [] : sizes) {
  const t = performance.now();
  let next = contacts;
  // contacts-batch-create, 100 a call, two calls at once: each contact owned by the next member.
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < size) {
        const from = next;
        next = Math.min(size, next + 100);
        const items = Array.from({ length: next - from }, (_, j) => ({ first_name: `Person ${from + j}`, owner_id: owners[(from + j) % owners.length] }));
        const r = await invokeOperation<{ results: { ok: boolean; error?: unknown }[] }>('contacts-batch-create', { items }, people);
        const failed = r.body.ok ? r.body.result!.results.find((x) => !x.ok) : r.body;
        if (failed) throw new Error(`contacts-batch-create: ${JSON.stringify(failed)}`);
      }
    }),
  );
  contacts = size;
  await stack.poller.drain(60 * 60_000);
  log(`${size} contacts created and counted in ${Math.round(performance.now() - t)} ms`);
  const ms: number[] = [];
  let rcu = 0;
  let items = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const { result, usage } = await measureCapacity(async () => (await invokeOperation<{ total: { count: number }; groups: unknown[] }>('contacts-summary', { group_by: 'owner' }, people)).body.result!);
    ms.push(performance.now() - t0);
    if (result.total.count !== size || result.groups.length !== 51) throw new Error(`counted ${result.total.count} of ${size} contacts in ${result.groups.length} groups`);
    rcu = Math.max(rcu, usage.rcu);
    items = Math.max(items, usage.itemsRead);
  }
  note({ read: 'contacts-summary owner (50 members)', records: size, rcu: round(rcu), items_read: items, p50_ms: round(percentile(ms, 50)), p95_ms: round(percentile(ms, 95)) });
  // A page of one owner's contacts (the owners in turn): its owner_id sort-ordered entries, then the page's records.
  const pageMs: number[] = [];
  let pageRcu = 0;
  let pageItems = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const { result, usage } = await measureCapacity(async () => (await invokeOperation<{ items: { owner_id: string }[] }>('contacts-list', { owner_id: owners[i % 5], limit: 25 }, people)).body.result!);
    pageMs.push(performance.now() - t0);
    const want = Math.min(25, size / owners.length);
    if (result.items.length !== want || result.items.some((c) => c.owner_id !== owners[i % 5])) throw new Error(`contacts-list owner_id: ${result.items.length} items, not ${want}`);
    pageRcu = Math.max(pageRcu, usage.rcu);
    pageItems = Math.max(pageItems, usage.itemsRead);
  }
  note({ read: 'contacts-list owner_id (limit 25)', records: size, rcu: round(pageRcu), items_read: pageItems, p50_ms: round(percentile(pageMs, 50)), p95_ms: round(percentile(pageMs, 95)) });
}


// The worker's cost of counting one stage move (a project leaving a stage for another): one
// transaction of its marker and the counters it changes (stage × 2; pipeline, status, the
// pipeline's status: unchanged within a pipeline between open stages). A synthetic change of
// another account, so the account above keeps its counts.
const other = randomUUID();
const project = (stageId: string) => ({ id: 'p1', account_id: other, name: 'x', status: 'open', amount: 500, currency: 'USD', pipeline_id: pipeline.id, stage_id: stageId, closed_at: null });
const move: RecordChange = { eventId: randomUUID(), op: 'updated', type: 'project', accountId: other, id: 'p1', at: new Date().toISOString(), old: project(pipeline.stages[0]!.id), new: project(pipeline.stages[1]!.id) };
const { usage: moveUsage } = await measureCapacity(() => countChanges([move]));
const create: RecordChange = { eventId: randomUUID(), op: 'created', type: 'project', accountId: other, id: 'p2', at: new Date().toISOString(), new: { ...project(pipeline.stages[0]!.id), id: 'p2' } };
const { usage: createUsage } = await measureCapacity(() => countChanges([create]));
// `wcu_billed`: as AWS bills a transaction (2 units per item of ≤ 1 KB; shared/db/capacity.ts);
// DynamoDB Local's ConsumedCapacity of a transaction (`wcu`) is not what AWS bills.
const writes = [
  { change: 'a stage move', wcu: round(moveUsage.wcu), wcu_billed: moveUsage.transactWcuBilled, transactions: moveUsage.calls },
  { change: 'a create in a stage', wcu: round(createUsage.wcu), wcu_billed: createUsage.transactWcuBilled, transactions: createUsage.calls },
];

console.log(table(rows));
console.log(table(writes));
writeFileSync('bench-pipelines.json', `${JSON.stringify({ reads: rows, writes }, null, 2)}\n`);
await stack.stop();
