/**
 * `npm run bench [-- --quick]`: cost, latency, bundle and webhook figures against the local stack.
 * Writes bench-results.json and prints a table. See README "Performance".
 */
import { writeFileSync } from 'node:fs';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invokeOperation } from '../local/invoke.js';
import { startLocalStack } from '../local/runtime.js';
import { measureCapacity } from '../shared/db/capacity.js';
import { db, tableName } from '../shared/db/client.js';
import { keys } from '../shared/db/table.js';
import { issueToken } from '../shared/auth/tokens.js';
import type { AuthContext } from '../shared/http/operation.js';
import { FIRST, type SeededContact, seedActivities, seedContacts, seedProjects, type SeedRefs, TAGS } from './seed.js';
import { searchNamesOf } from '../shared/db/record-model.js';
import { contactEntity, type EntityDefinition } from '../shared/schemas/entities/index.js';
import { apiClient } from './http.js';
import { percentile, table, timeIt } from './stats.js';
import { benchWebhooks } from './webhooks.js';
import { benchImports } from './imports.js';
import { benchExports } from './exports.js';
import { benchLongWords } from './long-words.js';
import { benchEvents } from './events.js';
import { benchBatches } from './batch.js';
import { benchBundles, bundleSummary } from './bundles.js';

const quick = process.argv.includes('--quick');
const sizes = quick ? [1_000, 10_000] : [10_000, 100_000];
const RUNS = quick ? 25 : 50;
process.env.CRM_AUTH_CACHE_SECONDS ??= '60'; // API Gateway caches authorizer results; so does the local server here
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
// The service's own cost and latency, without the account's rate limiter (its cost per request is
// `npm run bench:ratelimit`'s figure; with it on, the latency loops here go over 100 requests/s).
process.env.CRM_RATE_LIMIT ??= '0';

const stack = await startLocalStack({ port: 0 });
const log = (...a: unknown[]) => console.error('[bench]', ...a);

/** One account, grown to each size in turn (seeding is the slow part: DynamoDB Local writes ~1,300 items/s here). */
async function account() {
  const auth: AuthContext = { accountId: crypto.randomUUID(), userId: crypto.randomUUID() };
  const token = await issueToken(auth);
  const refs: SeedRefs = { companies: [], sources: [] };
  for (let i = 0; i < 50; i++) {
    const r = await invokeOperation<{ id: string; name: string }>('companies-create', { name: `Company ${i} GmbH`, domain: `company${i}.com` }, auth);
    refs.companies.push({ id: r.body.result!.id, name: r.body.result!.name, ver: 1 });
  }
  for (let i = 0; i < 10; i++) {
    const r = await invokeOperation<{ id: string; name: string }>('sources-create', { name: `Source ${i}` }, auth);
    refs.sources.push({ id: r.body.result!.id, name: r.body.result!.name });
  }
  const contacts: SeededContact[] = [];
  return {
    auth, token, refs, contacts,
    async growTo(size: number) {
      const t = performance.now();
      const before = contacts.length;
      contacts.push(...(await seedContacts(auth.accountId, auth.userId, size - before, refs, size, before)));
      // As many activities as contacts, all on the timeline of the first contact (and one other
      // each); a tenth as many projects.
      const ids = contacts.map((c) => c.id);
      await seedActivities(auth.accountId, auth.userId, ids, size - before, before);
      await seedProjects(auth.accountId, auth.userId, Math.round((size - before) / 10), before);
      log(`seeded up to ${size} contacts, ${size} activities, ${size / 10} projects in ${Math.round(performance.now() - t)} ms; stream worker writing search entries…`);
      await stack.poller.drain(60 * 60_000);
      log(`search entries written after ${Math.round(performance.now() - t)} ms`);
    },
  };
}

const clients = new Map<string, ReturnType<typeof apiClient>>();
async function http(token: string, op: string, body: unknown) {
  let client = clients.get(token);
  if (!client) clients.set(token, (client = apiClient(stack.baseUrl, token)));
  const { json } = await client(op, body);
  if (!json.ok) throw new Error(`${op} failed: ${JSON.stringify(json.error)}`);
  return json.result!;
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Rare query words: longer than 6 characters, each carried by two records only, while their first
 * 6 characters are shared by many (`alexan…` by every Alexander, `exampl…` by every email).
 */
const RARE_WORDS = ['alexandrina', 'kowalskiego', 'examplecorp', 'ivanovalova', 'alexanderson'];
async function addRareContacts(auth: AuthContext) {
  for (const w of RARE_WORDS) {
    for (let i = 0; i < 2; i++) {
      const body = w === 'examplecorp' ? { first_name: 'Rare', email: `rare${i}@examplecorp.com` } : { first_name: i ? w : 'Rare', last_name: i ? 'Rare' : w };
      const r = await invokeOperation('contacts-create', body, auth);
      if (!r.body.ok) throw new Error(`rare contact: ${JSON.stringify(r.body.error)}`);
    }
  }
  await stack.poller.drain(60_000);
}
const operationRows: Record<string, unknown>[] = [];
const overheadRows: Record<string, unknown>[] = [];

const a = await account();
for (const size of sizes) {
  await a.growTo(size);
  const sample = a.contacts[Math.floor(a.contacts.length / 2)]!;
  let counter = 0;
  const createBody = () => ({
    first_name: 'Benchmark', last_name: `Person${counter++}`, email: `bench.person${counter}@example.com`,
    tags: TAGS.slice(0, 5), company_id: a.refs.companies[0]!.id, source_id: a.refs.sources[0]!.id,
  });
  const victims = a.contacts.slice(-(RUNS + 5)).map((c) => c.id);
  if (size === sizes[0]) await addRareContacts(a.auth);
  const timeline = a.contacts[0]!.id;
  const three = a.contacts.slice(1, 4).map((c) => c.id);
  const cases: Array<{ name: string; op: string; body: () => unknown }> = [
    { name: 'contacts-list', op: 'contacts-list', body: () => ({}) },
    { name: 'contacts-list tags', op: 'contacts-list', body: () => ({ tags: ['tag-3'] }) },
    { name: 'contacts-list company_id', op: 'contacts-list', body: () => ({ company_id: a.refs.companies[1]!.id }) },
    { name: 'contacts-list source_ids', op: 'contacts-list', body: () => ({ source_ids: [a.refs.sources[2]!.id] }) },
    { name: 'contacts-list search name', op: 'contacts-list', body: () => ({ search: FIRST[0] }) },
    { name: 'contacts-list search email', op: 'contacts-list', body: () => ({ search: sample.email }) },
    { name: 'contacts-list search phone', op: 'contacts-list', body: () => ({ search: sample.phone.replace(/\D/g, '').slice(1, 8) }) },
    ...RARE_WORDS.map((w) => ({ name: `contacts-list search rare ${w}`, op: 'contacts-list', body: () => ({ search: w }) })),
    { name: 'contacts-get', op: 'contacts-get', body: () => ({ id: sample.id }) },
    { name: 'activities-list contact_id', op: 'activities-list', body: () => ({ contact_id: timeline }) },
    { name: 'projects-list status', op: 'projects-list', body: () => ({ status: ['completed'] }) },
    { name: 'activities-create three contacts', op: 'activities-create', body: () => ({ type: 'call', subject: 'Bench call', direction: 'outbound', duration_seconds: 60, contact_ids: three }) },
    { name: 'contacts-create', op: 'contacts-create', body: createBody },
    { name: 'contacts-update-notes', op: 'contacts-update', body: () => ({ id: sample.id, notes: `note ${counter++}` }) },
    { name: 'contacts-update-tags', op: 'contacts-update', body: () => ({ id: sample.id, tags: [`tag-${counter++ % 20}`, 'tag-1'] }) },
    { name: 'contacts-delete', op: 'contacts-delete', body: () => ({ id: victims.pop() }) },
  ];
  for (const c of cases) {
    const { result, usage } = await measureCapacity(() => invokeOperation(c.op, c.body(), a.auth));
    if (!result.body.ok) throw new Error(`${c.name}: ${JSON.stringify(result.body.error)}`);
    const items = (result.body.result as { items?: unknown[] })?.items;
    const lat = await timeIt(() => http(a.token, c.op, c.body()), RUNS);
    const billedWcu = usage.transactWcuBilled > 0 ? usage.transactWcuBilled + (usage.wcu > 0 ? 1 : 0) : usage.wcu;
    operationRows.push({
      name: c.name, size, rcu: round(usage.rcu), wcu: round(billedWcu), wcu_local: round(usage.wcu), items_read: usage.itemsRead,
      returned: items ? items.length : '', p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99),
    });
    log(`${size} ${c.name} rcu=${round(usage.rcu)} wcu=${round(billedWcu)} read=${usage.itemsRead}`);
    if (c.name === 'contacts-create') {
      // Search entries of that contact, written by the stream worker with BatchWriteItem: one unit each.
      const entries = searchNamesOf(contactEntity as EntityDefinition, result.body.result as Record<string, unknown>).length;
      operationRows.push({ name: 'contacts-create search entries (stream worker)', size, rcu: 0, wcu: entries, wcu_local: '', items_read: 0, returned: '', p50_ms: '', p99_ms: '' });
    }
  }

  // API latency against the same reads done directly with the DynamoDB client.
  const rawGet = () => db().send(new GetCommand({ TableName: tableName(), Key: keys.record(a.auth.accountId, 'contact', sample.id) }));
  const rawList = () =>
    db().send(new QueryCommand({ TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': keys.listPartition(a.auth.accountId, 'contact') }, ScanIndexForward: false, Limit: 26 }));
  for (const [name, op, body, raw] of [
    ['contacts-get', 'contacts-get', { id: sample.id }, rawGet],
    ['contacts-list', 'contacts-list', {}, rawList],
  ] as const) {
    const api: number[] = [];
    const dbt: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      api.push(...(await timeIt(() => http(a.token, op, body), 1, i === 0 ? 3 : 0)));
      dbt.push(...(await timeIt(raw, 1, i === 0 ? 3 : 0)));
    }
    const api50 = percentile(api, 50);
    const db50 = percentile(dbt, 50);
    overheadRows.push({ name, size, api_p50_ms: api50, db_p50_ms: db50, ratio: round(api50 / db50) });
  }
}

// Long search words among similar records (bench/long-words.ts): a second account grown to the same sizes.
const longWords = await benchLongWords(stack, sizes, log, RUNS).catch((error) => [{ error: String(error) }]);

// Bundles: the stack's esbuild settings (lib/bundling.ts), size and cold init against a bare node (bench/bundles.ts;
// `npm run bench:bundles` runs this section alone, `-- --rounds 5` repeats the init measurement).
const bundleRows = await benchBundles({ rounds: 3, log });
log('bundles', bundleSummary(bundleRows));

// The change log: RCU per events-list page at 10,000 (and 100,000) events (bench/events.ts).
const eventRows = await benchEvents(quick ? [10_000] : [10_000, 100_000], log).catch((error) => [{ error: String(error) }]);

const webhooks = await benchWebhooks(stack, 1000).catch((error) => ({ error: String(error) }));

// Imports: 10,000 (quick) or 100,000 contacts from a generated CSV (bench/imports.ts).
const imports = await benchImports(stack, quick ? 10_000 : 100_000, log).catch((error) => ({ error: String(error) }));

// Exports (contract §16): 10,000 (quick) or 100,000 contacts to a CSV file (bench/exports.ts).
const exportsFigures = await benchExports(stack, quick ? 10_000 : 100_000, log).catch((error) => ({ error: String(error) }));

// Batches (contract §13): 100 creates / upserts in one call against 100 single calls (bench/batch.ts).
const batches = await benchBatches(stack, quick ? 1 : 3, log).catch((error) => ({ error: String(error) }));

const results = { quick, sizes, operations: operationRows, long_words: longWords, overhead: overheadRows, bundles: bundleRows, events: eventRows, webhooks, imports, exports: exportsFigures, batches };
writeFileSync('bench-results.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('\nOperations (rcu/wcu per call; wcu = AWS-billed estimate, wcu_local = what DynamoDB Local reported)\n');
console.log(table(operationRows));
console.log('\nLong search words among similar records\n');
console.log(table(longWords));
console.log('\nOverhead (API vs raw DynamoDB, p50)\n');
console.log(table(overheadRows));
console.log('\nBundles\n');
console.log(table(bundleRows));
console.log('\nChange log (events-list: rcu per page of 25)\n');
console.log(table(eventRows));
console.log('\nWebhooks\n');
console.log(JSON.stringify(webhooks, null, 2));
console.log('\nImports\n');
console.log(JSON.stringify(imports, null, 2));
console.log('\nExports\n');
console.log(JSON.stringify(exportsFigures, null, 2));
console.log('\nBatches\n');
console.log(JSON.stringify(batches, null, 2));
await stack.stop();
process.exit(0);
