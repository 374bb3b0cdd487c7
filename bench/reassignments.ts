/**
 * `npm run bench:reassign [-- contacts]`: a reassignment of one member's contacts (contract §20)
 * beside a quiet account's webhooks.
 *
 * On a local stack as `npm start` runs it (workers in their thread, rate limit off), account A
 * batch-creates `contacts` contacts (default 2,000; 100 a call) owned by one member, then asks
 * reassignments-create to hand them to another and polls reassignments-get until it completes.
 * Account B has a webhook endpoint on a receiver of this process (127.0.0.1) and, while A's job
 * runs, creates a contact every half second and waits for its webhook. Reported: the job's
 * records a second (changed / (completed_at − created_at)), and B's webhook delivery (p50, p99,
 * max) while it ran. Only 127.0.0.1 is contacted.
 */
import { startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { resultApi, webhookArrivals } from './http.js';
import { percentile, table } from './stats.js';

const CONTACTS = Number(process.argv[2] ?? 2_000);
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.CRM_RATE_LIMIT = '0';
const log = (...a: unknown[]) => console.error('[bench:reassign]', ...a);

const stack = await startLocalStack({ port: 0, workersInThread: (process.env.CRM_LOCAL_WORKERS ?? 'thread') !== 'main' });

/** When each of B's contacts' webhooks arrived (by contact id). */
const receiver = await webhookArrivals();
const { arrived } = receiver;

const api = resultApi(stack.baseUrl);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const a = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  const b = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  await api(b, 'webhooks-create', { url: receiver.url('/b'), events: ['contact.created'] });
  const from = await api<{ id: string }>(a, 'members-create', { email: 'from@bench.example', name: 'From' });
  const to = await api<{ id: string }>(a, 'members-create', { email: 'to@bench.example', name: 'To' });
  for (let i = 0; i < CONTACTS; i += 100) {
    const n = Math.min(100, CONTACTS - i);
    const out = await api<{ results: { ok: boolean; error?: unknown }[] }>(a, 'contacts-batch-create', { items: Array.from({ length: n }, (_, j) => ({ first_name: `Owned${i + j}`, owner_id: from.id })) });
    const failed = out.results.find((r) => !r.ok);
    if (failed) throw new Error(`contacts-batch-create: ${JSON.stringify(failed.error)}`);
  }
  log(`${CONTACTS} contacts owned by one member created`);

  // B's probes: a contact every half second while A's job runs, each timed until its webhook arrives.
  const sent = new Map<string, number>();
  let running = true;
  const probes = (async () => {
    for (let i = 0; running; i++) {
      const at = Date.now();
      const c = await api<{ id: string }>(b, 'contacts-create', { first_name: `Quiet${i}` });
      sent.set(c.id, at);
      await sleep(500);
    }
  })();

  const job = await api<{ id: string }>(a, 'reassignments-create', { from_owner_id: from.id, to_owner_id: to.id, types: ['contacts'] });
  let done: { status: string; processed: number; changed: number; created_at: string; completed_at: string | null };
  for (;;) {
    done = await api(a, 'reassignments-get', { id: job.id });
    if (done.status === 'completed') break;
    await sleep(250);
  }
  running = false;
  await probes;
  // The last probes' webhooks (at most 30 s).
  for (let i = 0; i < 120 && [...sent.keys()].some((id) => !arrived.has(id)); i++) await sleep(250);

  const seconds = (Date.parse(done.completed_at!) - Date.parse(done.created_at)) / 1000;
  const latencies = [...sent].filter(([id]) => arrived.has(id)).map(([id, at]) => arrived.get(id)! - at).sort((x, y) => x - y);
  console.log(
    table([
      { measure: `A: reassignment of ${CONTACTS} contacts`, processed: done.processed, changed: done.changed, seconds: Math.round(seconds * 10) / 10, records_per_s: Math.round(done.changed / seconds) },
    ]),
  );
  console.log(
    table([
      { measure: 'B: webhook delivery while A\'s job ran', probes: sent.size, delivered: latencies.length, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), max_ms: latencies.at(-1) },
    ]),
  );
} finally {
  receiver.close();
  await stack.stop();
}
