/**
 * `npm run bench:filter [-- --sizes 1000,10000]`: filtering and sorting (contract §17) at two
 * account sizes on the local stack: read units (ConsumedCapacity) and items read of pages sorted
 * or narrowed by sort-ordered entries, of a selective condition no index serves (budget, every
 * match found), the write units sort-ordered entries add to a create and an update, and the rate
 * of an index build (a custom field turned `indexed`). Prints a table; writes bench-filter.json.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { invokeOperation } from '../local/invoke.js';
import { startLocalStack } from '../local/runtime.js';
import { measureCapacity } from '../shared/db/capacity.js';
import { familyOf } from '../shared/domain/records/family.js';
import type { AuthContext } from '../shared/http/operation.js';
import { contactEntity } from '../shared/schemas/entities/index.js';
import { FIRST, LAST, writeItems } from './seed.js';
import { table } from './stats.js';

const arg = process.argv.indexOf('--sizes');
const sizes = arg > 0 ? process.argv[arg + 1]!.split(',').map(Number) : [1_000, 10_000];
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.CRM_RATE_LIMIT ??= '0';
const log = (...a: unknown[]) => console.error('[bench:filter]', ...a);

const stack = await startLocalStack({ port: 0 });
const store = familyOf(contactEntity).store;
const auth: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
const round = (x: number) => Math.round(x * 10) / 10;

async function call<T>(op: string, body: unknown): Promise<T> {
  const r = await invokeOperation<T>(op, body, auth);
  if (!r.body.ok) throw new Error(`${op}: ${JSON.stringify(r.body.error)}`);
  return r.body.result as T;
}

/** Contacts written in bulk through the record store's items: one in 500 has the rare last name, one in 397 the rare job title. */
let seeded = 0;
async function growTo(size: number) {
  const items: Record<string, unknown>[] = [];
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = seeded; i < size; i++) {
    const fields = {
      first_name: FIRST[i % FIRST.length], last_name: i % 500 === 7 ? 'Quillfeather' : LAST[(i * 7) % LAST.length], email: `c${i}@example.com`, phone: '', company_id: null, company_name: '',
      job_title: i % 397 === 5 ? 'Astronaut' : 'Engineer', address: '', city: 'Berlin', state: '', zip_code: '', country: 'DE', notes: '', tags: [], source_id: null, source_name: '', custom_fields: {},
    };
    const { item, entries } = store.newItems({ accountId: auth.accountId, userId: auth.userId, fields }, new Date(start + i * 1000).toISOString(), randomUUID());
    items.push(item, ...entries);
  }
  await writeItems(items);
  seeded = size;
}

type Row = Record<string, string | number>;
const rows: Row[] = [];

async function page(name: string, size: number, body: Record<string, unknown>, opts: { walk?: boolean } = {}) {
  let cursor: string | undefined;
  let pages = 0;
  let found = 0;
  let maxRcu = 0;
  let maxRead = 0;
  let first: { rcu: number; read: number; returned: number } | undefined;
  do {
    const { result, usage } = await measureCapacity(() => call<{ items: unknown[]; next_cursor: string }>('contacts-list', { ...body, limit: 25, ...(cursor ? { cursor } : {}) }));
    pages++;
    found += result.items.length;
    maxRcu = Math.max(maxRcu, usage.rcu);
    maxRead = Math.max(maxRead, usage.itemsRead);
    first ??= { rcu: usage.rcu, read: usage.itemsRead, returned: result.items.length };
    cursor = result.next_cursor || undefined;
  } while (cursor && (opts.walk || pages < 2));
  rows.push({ case: name, contacts: size, rcu_first_page: round(first!.rcu), items_read_first_page: first!.read, returned_first_page: first!.returned, pages_read: pages, max_rcu_per_page: round(maxRcu), max_items_read_per_page: maxRead, ...(opts.walk ? { matches_found: found } : {}) });
  log(name, size, `rcu=${round(first!.rcu)} read=${first!.read} pages=${pages} found=${found}`);
}

const writes: Row[] = [];
const builds: Row[] = [];
let n = 0;
for (const size of sizes) {
  const t = performance.now();
  await growTo(size);
  log(`seeded ${size} contacts in ${Math.round(performance.now() - t)} ms`);
  await page('sort first_name asc (entries)', size, { sort: { field: 'first_name', direction: 'asc' } });
  await page('sort updated_at desc (entries)', size, { sort: { field: 'updated_at', direction: 'desc' } });
  await page('sort last_name desc, empty last (entries)', size, { sort: { field: 'last_name', direction: 'desc' } });
  await page('last_name eq rare (entries, list order)', size, { filter: { field: 'last_name', op: 'eq', value: 'quillfeather' } }, { walk: true });
  await page('first_name eq broad (entries, list order)', size, { filter: { field: 'first_name', op: 'eq', value: FIRST[0] } });
  await page('first_name in 3 values (entries, list order)', size, { filter: { field: 'first_name', op: 'in', value: FIRST.slice(0, 3) } });
  await page('email prefix c12 + sort email (entries)', size, { filter: { field: 'email', op: 'prefix', value: 'c12' }, sort: { field: 'email', direction: 'asc' } });
  await page('job_title eq rare (no index: budget)', size, { filter: { field: 'job_title', op: 'eq', value: 'astronaut' } }, { walk: true });

  // Write units: a create (its sort-ordered entries: first_name, last_name, email, updated_at) and updates (the stamp's entry moves beside each).
  const create = await measureCapacity(() => call<{ id: string }>('contacts-create', { first_name: 'Bench', last_name: 'Writer', email: `w${n++}@example.com` }));
  const id = create.result.id;
  const notes = await measureCapacity(() => call('contacts-update', { id, notes: `n${n++}` }));
  const name = await measureCapacity(() => call('contacts-update', { id, first_name: `Renamed${n++}` }));
  const billed = (u: { transactWcuBilled: number; wcu: number }) => (u.transactWcuBilled > 0 ? u.transactWcuBilled : u.wcu);
  writes.push(
    // Sorted entries: a create's 4 in its transaction (2 WCU each); an update's moved ones beside it (a put and a delete per field, 1 WCU each: updated_at always, first_name when renamed).
    { case: 'contacts-create', contacts: size, wcu_billed: round(billed(create.usage)), rcu: round(create.usage.rcu), sorted_entry_items: 4, sorted_wcu: 8 },
    { case: 'contacts-update notes', contacts: size, wcu_billed: round(billed(notes.usage)), rcu: round(notes.usage.rcu), sorted_entry_items: 2, sorted_wcu: 2 },
    { case: 'contacts-update first_name', contacts: size, wcu_billed: round(billed(name.usage)), rcu: round(name.usage.rcu), sorted_entry_items: 4, sorted_wcu: 4 },
  );

  // An index build: a custom field turned indexed, its entries written for every contact.
  const field = await call<{ id: string }>('custom-fields-create', { entity_type: 'contact', name: `plan ${size}`, field_type: 'number' });
  const b0 = performance.now();
  await call('custom-fields-update', { id: field.id, indexed: true });
  for (;;) {
    const d = await call<{ index_status: string }>('custom-fields-get', { id: field.id });
    if (d.index_status === 'ready') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = performance.now() - b0;
  const records = seeded + n;
  builds.push({ case: 'index build (custom field turned indexed)', contacts: records, ms: Math.round(ms), records_per_s: Math.round(records / (ms / 1000)) });
  log(`build of ${records} records in ${Math.round(ms)} ms`);
}

console.log(table(rows));
console.log(table(writes));
console.log(table(builds));
writeFileSync('bench-filter.json', JSON.stringify({ pages: rows, writes, builds }, null, 2));
await stack.stop();
