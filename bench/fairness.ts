/**
 * `npm run bench:fair [-- contacts]`: one account's bulk work beside a quiet account's webhooks and
 * search (docs/performance.md, "Fairness").
 *
 * On a local stack as `npm start` runs it (workers in their thread, rate limit off), account A
 * batch-creates `contacts` contacts (default 20,000; 100 a call, two calls at a time) over HTTP.
 * Account B has a webhook endpoint on a receiver of this process (127.0.0.1) and, before and
 * while A writes, creates a contact every half second and waits for its webhook and for search to
 * find it. Reported: B's webhook delivery and search freshness (p50, p99, max) and its own create
 * call (p99), alone and beside A (all, then split: while A writes, while A's backlog drains), and
 * A's own drain rate (contacts a second from its first call until search finds its last
 * contact). Writes bench-fairness.json. Only 127.0.0.1 is contacted.
 *
 * Target: B's webhook delivery p99 and search freshness p99 ≤ 2 s while A writes.
 */
import { writeFileSync } from 'node:fs';
import { startLocalStack } from '../local/runtime.js';
import { issueToken } from '../shared/auth/tokens.js';
import { resultApi, webhookArrivals } from './http.js';
import { percentile, table } from './stats.js';

const CONTACTS = Number(process.argv[2] ?? 20_000);
const PARALLEL_CALLS = 2;
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.CRM_RATE_LIMIT = '0';
const log = (...a: unknown[]) => console.error('[bench:fair]', ...a);
const backlogLines: string[] = [];
const print = console.log.bind(console);
// The stack's backlog lines (local/queue-worker.ts) are kept for the report.
console.log = (...a: unknown[]) => {
  const line = a.map(String).join(' ');
  if (/ is behind| drained/.test(line)) backlogLines.push(`${new Date().toISOString()} ${line}`);
  else print(...a);
};

const stack = await startLocalStack({ port: 0, workersInThread: (process.env.CRM_LOCAL_WORKERS ?? 'thread') !== 'main' });

/** When each of B's contacts' webhooks arrived (by contact id). */
const receiver = await webhookArrivals();
const { arrived } = receiver;

const api = resultApi(stack.baseUrl);

const until = async (fn: () => Promise<boolean> | boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

try {
  const a = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  const b = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
  await api(b, 'webhooks-create', { url: receiver.url('/b'), events: ['contact.created'] });

  let probes = 0;
  /** When A's last batch call answered (0 while A writes). */
  let writtenAt = 0;
  const probe = async () => {
    const name = `Quiet${probes++}${crypto.randomUUID().slice(0, 6)}`;
    const start = Date.now();
    const { id } = await api<{ id: string }>(b, 'contacts-create', { first_name: name, last_name: 'Probe' });
    const create = Date.now() - start;
    const during = writtenAt === 0 ? 'writing' : 'draining';
    const [delivery, search] = await Promise.all([
      until(() => arrived.has(id), 600_000, `B's webhook`).then(() => arrived.get(id)! - start),
      until(async () => (await api<{ items: unknown[] }>(b, 'contacts-list', { search: name })).items.length === 1, 600_000, `B's search`).then(() => Date.now() - start),
    ]);
    return { create, delivery, search, during };
  };
  type Probe = Awaited<ReturnType<typeof probe>>;
  const probeWhile = async (more: () => boolean) => {
    const out: Probe[] = [];
    while (more()) {
      out.push(await probe());
      await new Promise((r) => setTimeout(r, 500));
    }
    return out;
  };

  await probe(); // warm-up
  let aloneLeft = 10;
  const alone = await probeWhile(() => aloneLeft-- > 0);
  log(`B alone: ${alone.length} probes`);

  // ---- A writes; B probes until A's last contact is found by search.
  const t0 = Date.now();
  let next = 0;
  const lastName = `Bulkmark${crypto.randomUUID().slice(0, 6)}`;
  const writers = Array.from({ length: PARALLEL_CALLS }, async () => {
    while (next * 100 < CONTACTS) {
      const call = next++;
      const n = Math.min(100, CONTACTS - call * 100);
      const items = Array.from({ length: n }, (_, i) => {
        const k = call * 100 + i;
        return { first_name: k === CONTACTS - 1 ? lastName : `Bulk${k}`, last_name: 'Importer', email: `bulk${k}@a.example`, phone: `+1 (555) ${100 + (k % 900)}-${1000 + (k % 9000)}` };
      });
      await api(a, 'contacts-batch-create', { items });
      if (call % 20 === 0) log(`A: ${(call + 1) * 100} contacts written, ${Math.round((Date.now() - t0) / 1000)} s`);
    }
  });
  let aFound = 0;
  const aDone = (async () => {
    await Promise.all(writers);
    writtenAt = Date.now();
    log(`A: ${CONTACTS} contacts written in ${Math.round((writtenAt - t0) / 1000)} s`);
    await until(async () => (await api<{ items: unknown[] }>(a, 'contacts-list', { search: lastName })).items.length === 1, 3_600_000, "A's last contact");
    aFound = Date.now();
  })();
  const busy = await probeWhile(() => aFound === 0);
  await aDone;

  const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs) });
  const row = (phase: string, xs: Probe[]) => ({
    phase,
    probes: xs.length,
    ...Object.fromEntries((['delivery', 'search'] as const).flatMap((what) => Object.entries(stats(xs.map((x) => x[what]))).map(([k, v]) => [`${what === 'delivery' ? 'webhook' : what} ${k} ms`, v]))),
    // B's own create call: what the write path costs before any queue (locally, one DynamoDB Local serves A's writes and B's).
    'create p99 ms': percentile(xs.map((x) => x.create), 99),
  });
  const rows = [
    row('B alone', alone),
    row(`B beside A's ${CONTACTS}`, busy),
    row('… while A writes', busy.filter((x) => x.during === 'writing')),
    row("… while A's backlog drains", busy.filter((x) => x.during === 'draining')),
  ];
  const drain = { contacts: CONTACTS, writtenSeconds: Math.round((writtenAt - t0) / 100) / 10, caughtUpSeconds: Math.round((aFound - t0) / 100) / 10, contactsPerSecond: Math.round((CONTACTS / ((aFound - t0) / 1000)) * 10) / 10 };
  print(table(rows));
  print(`A: ${CONTACTS} contacts written in ${drain.writtenSeconds} s, all searchable after ${drain.caughtUpSeconds} s: ${drain.contactsPerSecond} contacts/s`);
  print(backlogLines.join('\n'));
  writeFileSync('bench-fairness.json', JSON.stringify({ rows, drain, backlogLines, busy, alone }, null, 2));
} finally {
  receiver.close();
  await stack.stop();
}
