/**
 * `npm run bench:ratelimit`: what the per-account rate limiter (contract §14) costs. Against the
 * local stack: the API/raw DynamoDB p50 rows of `npm run bench` with the limiter off and on, and
 * the capacity a request adds (measured with ReturnConsumedCapacity). Writes
 * bench-rate-limit.json and prints tables. See docs/performance.md "Rate limiting".
 */
import { writeFileSync } from 'node:fs';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invokeOperation } from '../local/invoke.js';
import { startLocalStack } from '../local/runtime.js';
import { issueKey } from '../shared/auth/tokens.js';
import { measureCapacity } from '../shared/db/capacity.js';
import { db, tableName } from '../shared/db/client.js';
import { keys } from '../shared/db/table.js';
import { rateLimitStats } from '../shared/domain/rate-limit.js';
import type { AuthContext } from '../shared/http/operation.js';
import { apiClient } from './http.js';
import { percentile, table, timeIt } from './stats.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
process.env.CRM_AUTH_CACHE_SECONDS ??= '60'; // as API Gateway: the authorizer's answer is cached
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.CRM_RATE_LIMIT = '0';
const stack = await startLocalStack({ port: 0 });
const log = (...a: unknown[]) => console.error('[bench:ratelimit]', ...a);
const round = (n: number) => Math.round(n * 100) / 100;
const round2 = (n: number) => Math.round(n);

const auth: AuthContext = { accountId: crypto.randomUUID(), userId: crypto.randomUUID() };
const { key, token } = await issueKey(auth, { name: 'bench' });
const caller = { ...auth, keyId: key.id, scopes: ['*'] } as AuthContext;
const ids: string[] = [];
for (let i = 0; i < 100; i++) {
  const r = await invokeOperation<{ id: string }>('contacts-create', { first_name: `Bench${i}`, email: `bench${i}@example.com`, tags: ['a', 'b'] }, auth);
  ids.push(r.body.result!.id);
}
await stack.poller.drain(120_000);
const sample = ids[50]!;
log('seeded 100 contacts');

const client = apiClient(stack.baseUrl, token);
async function http(op: string, body: unknown) {
  const { status, json } = await client(op, body);
  if (!json.ok) throw new Error(`${op} failed (${status}): ${JSON.stringify(json.error)}`);
}
const rawGet = () => db().send(new GetCommand({ TableName: tableName(), Key: keys.record(auth.accountId, 'contact', sample) }));
const rawList = () =>
  db().send(new QueryCommand({ TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': keys.listPartition(auth.accountId, 'contact') }, ScanIndexForward: false, Limit: 26 }));

// A limit the runs never reach: the limiter does all its work (a lease write every k calls, k
// following the account's rate on this instance) but never refuses.
const ON = '10000,20000';
const overhead: Record<string, unknown>[] = [];
for (const [name, op, body, raw] of [
  ['contacts-get', 'contacts-get', { id: sample }, rawGet],
  ['contacts-list', 'contacts-list', {}, rawList],
] as const) {
  const lat: Record<'off' | 'on' | 'db', number[]> = { off: [], on: [], db: [] };
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so both settings meet the same machine load.
    for (const setting of ['off', 'on'] as const) {
      process.env.CRM_RATE_LIMIT = setting === 'on' ? ON : '0';
      lat[setting].push(...(await timeIt(() => http(op, body), 1, i === 0 ? 3 : 0)));
    }
    lat.db.push(...(await timeIt(raw, 1, i === 0 ? 3 : 0)));
  }
  const [off, on, dbp] = [percentile(lat.off, 50), percentile(lat.on, 50), percentile(lat.db, 50)];
  overhead.push({ name, api_p50_ms_limiter_off: off, api_p50_ms_limiter_on: on, db_p50_ms: dbp, ratio_off: round(off / dbp), ratio_on: round(on / dbp), added_ms: round(on - off) });
  log(name, overhead.at(-1));
}

/** Capacity of one call made in-process (the same handler Lambda runs), with the given setting. */
async function capacity(setting: string, op: string, body: unknown, who: AuthContext = caller) {
  process.env.CRM_RATE_LIMIT = setting;
  const { result, usage } = await measureCapacity(() => invokeOperation(op, body, who));
  return { status: result.status, rcu: round(usage.rcu), wcu: round(usage.wcu), calls: usage.calls };
}
const capacityRows: Record<string, unknown>[] = [];
for (const [name, op, body] of [
  ['contacts-get', 'contacts-get', { id: sample }],
  ['contacts-list', 'contacts-list', {}],
] as const) {
  const off = await capacity('0', op, body);
  const on = await capacity(ON, op, body);
  capacityRows.push({ name, rcu_off: off.rcu, wcu_off: off.wcu, calls_off: off.calls, rcu_on: on.rcu, wcu_on: on.wcu, calls_on: on.calls, added_wcu: round(on.wcu - off.wcu) });
}
// Sustained load: one account, 10 calls at a time for 300 calls after a warm-up of 100, with the
// default limit (100,200: leases up to 20 tokens): the limiter's write units per request.
{
  process.env.CRM_RATE_LIMIT = '100,200';
  const busy: AuthContext = { accountId: crypto.randomUUID(), userId: auth.userId, scopes: ['*'] };
  const tenAtOnce = () => Promise.all(Array.from({ length: 10 }, () => invokeOperation('contacts-get', { id: sample }, busy)));
  for (let i = 0; i < 10; i++) await tenAtOnce();
  const before = rateLimitStats();
  const started = performance.now();
  const { usage } = await measureCapacity(async () => {
    for (let i = 0; i < 30; i++) await tenAtOnce();
  });
  const after = rateLimitStats();
  const seconds = (performance.now() - started) / 1000;
  const requests = after.requests - before.requests;
  capacityRows.push({
    name: `sustained load, ${round2(requests / seconds)} requests/s of one account (100,200)`,
    rcu_on: round(usage.rcu / requests),
    wcu_on: round(usage.wcu / requests),
    added_wcu: round(usage.wcu / requests),
    bucket_writes_per_request: round((after.writes - before.writes) / requests),
  });
  // An idle account: one call, one write (k = 1; the headers are exact).
  const idle: AuthContext = { accountId: crypto.randomUUID(), userId: auth.userId, scopes: ['*'] };
  const one = await capacity('100,200', 'contacts-get', { id: sample }, idle);
  capacityRows.push({ name: 'idle account, one call (k = 1)', rcu_on: one.rcu, wcu_on: one.wcu, calls_on: one.calls, added_wcu: one.wcu });
}

// A bucket of one request per 100 s: the first call passes, the second is refused. This instance
// saw the bucket's state in the first answer, so it refuses from memory (no DynamoDB call); another
// instance would spend one failed conditional write (1 WCU) to learn it.
const drained: AuthContext = { accountId: crypto.randomUUID(), userId: auth.userId, scopes: ['*'] };
await capacity('0.01,1', 'contacts-get', { id: sample }, drained);
const refused = await capacity('0.01,1', 'contacts-get', { id: sample }, drained);
if (refused.status !== 429) throw new Error(`expected 429, got ${refused.status}`);
capacityRows.push({ name: 'refused (429) by an instance that saw the account over its limit', rcu_on: refused.rcu, wcu_on: refused.wcu, calls_on: refused.calls, added_wcu: refused.wcu });

// last_used_at: the first call of a key in a minute writes it once (then nothing for a minute).
const fresh = await issueKey(auth, { name: 'fresh' });
const firstUse = await capacity('0', 'contacts-get', { id: sample }, { ...auth, keyId: fresh.key.id, scopes: ['*'] } as AuthContext);
const baseline = await capacity('0', 'contacts-get', { id: sample });
capacityRows.push({ name: 'first call of a key in a minute (last_used_at)', wcu_off: round(firstUse.wcu - baseline.wcu), added_wcu: round(firstUse.wcu - baseline.wcu) });

const results = { runs: RUNS, overhead, capacity: capacityRows };
writeFileSync('bench-rate-limit.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('\nOverhead (API vs raw DynamoDB, p50; limiter off / on)\n');
console.log(table(overhead));
console.log('\nCapacity per call (limiter off / on)\n');
console.log(table(capacityRows));
await stack.stop();
process.exit(0);
