/**
 * Erasures under a burst (contract §18: `completed` within 60 s in local mode), on the local stack
 * with its own DynamoDB Local: account A asks to erase N contacts at once (each with a few
 * activities), and account B asks for one erasure right after. Reports when each of A's erasures
 * completed after its request, and B's. `npm run bench:erasures [-- N]` (default 20).
 */
import { startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { apiClient } from './http.js';
import { percentile, table } from './stats.js';

const N = Number(process.argv[2] ?? 20);
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.CRM_RATE_LIMIT = '0';
const log = (...a: unknown[]) => console.error('[bench:erasures]', ...a);

const stack = await startLocalStack({ port: 0 });

/** An API call as `token` (the benches' keep-alive client), its result or a thrown error. */
const clients = new Map<string, ReturnType<typeof apiClient>>();
async function api<T = Record<string, unknown>>(token: string, op: string, body: unknown): Promise<T> {
  if (!clients.has(token)) clients.set(token, apiClient(stack.baseUrl, token));
  const { status, json } = await clients.get(token)!(op, body);
  if (!json.ok) throw new Error(`${op} failed (${status}): ${JSON.stringify(json.error)}`);
  return json.result as T;
}

/** A contact with three activities, ready to be erased. */
async function person(token: string, i: number): Promise<string> {
  const c = await api<{ id: string }>(token, 'contacts-create', { first_name: `Erase${i}`, last_name: 'Me', email: `erase${i}@burst.example`, phone: '+1 (555) 123-4567' });
  await api(token, 'activities-batch-create', { items: Array.from({ length: 3 }, (_, j) => ({ type: 'note', subject: `n${j}`, contact_ids: [c.id] })) });
  return c.id;
}

/** Milliseconds from `asked` until the erasure shows `completed`. */
async function completion(token: string, id: string, asked: number): Promise<number> {
  for (;;) {
    const e = await api<{ status: string }>(token, 'erasures-get', { id });
    if (e.status === 'completed') return Date.now() - asked;
    if (Date.now() - asked > 600_000) throw new Error(`erasure ${id} still ${e.status} after 600 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

try {
  const a = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  const b = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  const mine: string[] = [];
  for (let i = 0; i < N; i++) mine.push(await person(a, i));
  const theirs = await person(b, N);
  log(`${N + 1} contacts with 3 activities each created`);

  const askedA = Date.now();
  const burst = await Promise.all(mine.map((contact_id) => api<{ id: string }>(a, 'erasures-create', { contact_id })));
  const askedB = Date.now();
  const single = await api<{ id: string }>(b, 'erasures-create', { contact_id: theirs });
  const [aTimes, bTime] = await Promise.all([Promise.all(burst.map((e) => completion(a, e.id, askedA))), completion(b, single.id, askedB)]);
  const sorted = [...aTimes].sort((x, y) => x - y);
  console.log(
    table([
      { account: `A: ${N} erasures at once`, first_ms: sorted[0], p50_ms: percentile(sorted, 50), last_ms: sorted.at(-1) },
      { account: 'B: one erasure, asked right after', first_ms: bTime, p50_ms: bTime, last_ms: bTime },
    ]),
  );
} finally {
  await stack.stop();
}
