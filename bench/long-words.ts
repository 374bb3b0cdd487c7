/**
 * Long search words (contract §4): one account grown to each size with contacts whose words share
 * long prefixes (`Verification12…`, `Reconciliation99…`), two contacts per query word that really
 * match it, and the cost and latency of those 14–17 character queries (and of a two-word query
 * whose rare word is the second) at each size. Rows for bench/run.ts, or alone:
 * `npm run bench:search [-- 1000 10000]`.
 */
import { randomUUID } from 'node:crypto';
import { invokeOperation } from '../local/invoke.js';
import { type LocalStack, startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { measureCapacity } from '../shared/db/capacity.js';
import { familyOf } from '../shared/domain/records/family.js';
import { contactEntity } from '../shared/schemas/entities/index.js';
import type { AuthContext } from '../shared/http/operation.js';
import { writeItems } from './seed.js';
import { percentile, table, timeIt } from './stats.js';

export const LONG_QUERIES = ['verification123', 'verificationzz', 'reconciliation999', 'verification scarcity'];
const MATCHES: Record<string, Array<Record<string, string>>> = {
  verification123: [{ first_name: 'Verification123' }, { first_name: 'verification123abc' }],
  verificationzz: [{ first_name: 'Verificationzz' }, { first_name: 'verificationzz9' }],
  reconciliation999: [{ first_name: 'Match', last_name: 'Reconciliation999' }, { first_name: 'Match', last_name: 'reconciliation9990' }],
};

/** Contacts sharing the queries' first 12–16 characters; the oldest 50 also carry the rare word `scarcity…`. */
async function seedSimilar(accountId: string, userId: string, from: number, count: number): Promise<void> {
  const start = Date.parse('2025-01-01T00:00:00Z') + from * 1000;
  for (let offset = 0; offset < count; offset += 2_000) {
    const items: Record<string, unknown>[] = [];
    for (let i = from + offset; i < from + Math.min(count, offset + 2_000); i++) {
      const letter = String.fromCharCode(97 + (i % 25));
      const fields = {
        first_name: `Verification12${letter}${i}`, last_name: `Reconciliation99${letter}${i}`, email: i < 50 ? `scarcity${i}@x${i}.test` : '', phone: '', company_id: null, company_name: '',
        job_title: '', address: '', city: '', state: '', zip_code: '', country: '', notes: '', tags: [], source_id: null, source_name: '', custom_fields: {},
      };
      const { item, entries } = familyOf(contactEntity).store.newItems({ accountId, userId, fields }, new Date(start + (i - from) * 1000).toISOString(), randomUUID());
      items.push(item, ...entries);
    }
    await writeItems(items);
  }
}

export async function benchLongWords(stack: LocalStack, sizes: number[], log: (...a: unknown[]) => void, runs = 15): Promise<Record<string, unknown>[]> {
  const auth: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
  const token = await issueToken(auth);
  for (const bodies of Object.values(MATCHES)) for (const body of bodies) await invokeOperation('contacts-create', body, auth);
  const rows: Record<string, unknown>[] = [];
  let seeded = 0;
  for (const size of sizes) {
    const t = performance.now();
    await seedSimilar(auth.accountId, auth.userId, seeded, size - seeded);
    seeded = size;
    await stack.poller.drain(60 * 60_000);
    log(`long words: ${size} similar contacts and their search entries in ${Math.round(performance.now() - t)} ms`);
    for (const search of LONG_QUERIES) {
      const body = { search, limit: 25 };
      const { result, usage } = await measureCapacity(() => invokeOperation<{ items: unknown[] }>('contacts-list', body, auth));
      const lat = await timeIt(async () => {
        const res = await fetch(`${stack.baseUrl}/api/contacts-list`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        await res.json();
      }, runs);
      rows.push({ name: `contacts-list search ${search}`, size, rcu: Math.round(usage.rcu * 100) / 100, items_read: usage.itemsRead, returned: result.body.result?.items.length, p50_ms: percentile(lat, 50), p99_ms: percentile(lat, 99) });
      log(`${size} ${search}: rcu=${usage.rcu} read=${usage.itemsRead} p50=${percentile(lat, 50)}`);
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.CRM_AUTH_CACHE_SECONDS ??= '60';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const stack = await startLocalStack({ port: 0 });
  const rows = await benchLongWords(stack, sizes.length ? sizes : [1_000, 10_000], (...a) => console.error('[bench]', ...a));
  console.log(table(rows));
  await stack.stop();
  process.exit(0);
}
