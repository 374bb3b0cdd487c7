/**
 * Erasures under a burst (contract §18: `completed` within 60 s in local mode), on the local stack
 * with its own DynamoDB Local: account A asks to erase N contacts at once (each with a few
 * activities), and account B asks for one erasure right after. Reports when each of A's erasures
 * completed after its request, and B's (seen by polling each account's list every 250 ms).
 * `npm run bench:erasures [-- N]` (default 20).
 */
import { startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { resultApi } from './http.js';
import { percentile, table } from './stats.js';

const N = Number(process.argv[2] ?? 20);
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.CRM_RATE_LIMIT = '0';
const log = (...a: unknown[]) => console.error('[bench:erasures]', ...a);

const stack = await startLocalStack({ port: 0 });

/** An API call as `token` (the benches' keep-alive client), its result or a thrown error. */
const api = resultApi(stack.baseUrl);

/** A contact with three activities, ready to be erased. */
async function person(token: string, i: number): Promise<string> {
  const c = await api<{ id: string }>(token, 'contacts-create', { first_name: `Erase${i}`, last_name: 'Me', email: `erase${i}@burst.example`, phone: '+1 (555) 123-4567' });
  await api(token, 'activities-batch-create', { items: Array.from({ length: 3 }, (_, j) => ({ type: 'note', subject: `n${j}`, contact_ids: [c.id] })) });
  return c.id;
}

/**
 * Milliseconds from `asked` until each erasure shows `completed`, as a client watching its
 * erasures would see it: one `erasures-list` of the account (every page) every POLL_MS. (Polling
 * each erasure with its own `erasures-get` every 100 ms made 400 reads a second at N = 40, which
 * the one DynamoDB Local serves beside the erasures themselves: the bench slowed what it measured.)
 */
const POLL_MS = 250;
async function completions(token: string, ids: string[], asked: number): Promise<Map<string, number>> {
  const done = new Map<string, number>();
  const wanted = new Set(ids);
  while (done.size < wanted.size) {
    let cursor = '';
    do {
      const page = await api<{ items: { id: string; status: string }[]; next_cursor: string }>(token, 'erasures-list', { limit: 100, ...(cursor ? { cursor } : {}) });
      for (const e of page.items) if (wanted.has(e.id) && e.status === 'completed' && !done.has(e.id)) done.set(e.id, Date.now() - asked);
      cursor = page.next_cursor;
    } while (cursor);
    if (Date.now() - asked > 600_000) throw new Error(`${wanted.size - done.size} erasures not completed after 600 s`);
    if (done.size < wanted.size) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return done;
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
  const [aDone, bDone] = await Promise.all([completions(a, burst.map((e) => e.id), askedA), completions(b, [single.id], askedB)]);
  const sorted = [...aDone.values()].sort((x, y) => x - y);
  const bTime = bDone.get(single.id)!;
  console.log(
    table([
      { account: `A: ${N} erasures at once`, first_ms: sorted[0], p50_ms: percentile(sorted, 50), last_ms: sorted.at(-1) },
      { account: 'B: one erasure, asked right after', first_ms: bTime, p50_ms: bTime, last_ms: bTime },
    ]),
  );
} finally {
  await stack.stop();
}
