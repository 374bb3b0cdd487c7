/**
 * Contract §7 in local mode with CRM_DATA_DIR, one kill -9 for everything in flight: `npm start`
 * (tsx local/start.ts) runs four accounts' work at once — imports being applied while creates are
 * acknowledged (§10), a merge re-pointing its links (§15), an erasure held half-way (§18), webhook
 * deliveries being retried while their receiver is down — and the whole service, DynamoDB Local's
 * Java process included (a process group of its own), is killed with SIGKILL at a moment when
 * each is half-way. Restarted on the same directory (the receiver up again), nothing acknowledged
 * is lost and each finishes, once:
 *
 * - creates: every acknowledged one is there; imports (an uploaded file and an inline csv) resume
 *   and complete, every row once;
 * - the merge: every link ends on the primary, none twice, none left on the secondary;
 * - the erasure: completed once, `contact.erased` and its cascades (`project.updated`,
 *   `activity.deleted`) in the change log once and delivered once;
 * - webhooks: every pending delivery arrives, the stream raises no event it had handled, and
 *   nothing recorded delivered is sent again.
 *
 * Beside it, DynamoDB Local alone (test/helpers/durable-writer.ts): no acknowledged transaction is
 * lost when its Java process is killed right after.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../shared/schemas/webhooks.js';
import { call, crash, type Service, startService } from '../helpers/local-service.js';
import { Receiver } from '../helpers/webhook-harness.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** The test process's own variables stay out of the child's. */
const childEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'].includes(k)));

type Rec = Record<string, unknown> & { id: string };
type Page = { items: Rec[]; next_cursor: string };
type Event = { id: string; event: string; record_id: string; data: Record<string, unknown> };
type Job = { id: string; status: string; processed_rows: number; created_count: number; updated_count: number; error_count: number; failure_reason: string; upload_url?: string };

const started: Service[] = [];
const dirs: string[] = [];
const receiver = new Receiver();
afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) await crash(s).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await receiver.close();
});

const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'crm-crash-'));
  dirs.push(d);
  return d;
};

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One account per kind of work (CRM_DEV_TOKENS), so each one's checks see only its own records. */
const account = (name: string) => ({ token: `drill-${name}-${randomUUID()}`, accountId: randomUUID(), userId: randomUUID() });
const ACCOUNTS = { writes: account('writes'), merge: account('merge'), erasure: account('erasure'), webhooks: account('webhooks') };
const DEV_TOKENS = Object.values(ACCOUNTS).map((a) => `${a.token}=${a.accountId}:${a.userId}`).join(',');
type Account = keyof typeof ACCOUNTS;

async function result<T = Rec>(s: Service, who: Account, op: string, body: unknown): Promise<T> {
  const r = await call<T>(s, op, body, ACCOUNTS[who].token);
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result;
}

/** Every item of a list operation (pages of 100). */
async function all(s: Service, who: Account, op: string, body: Record<string, unknown> = {}): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor = '';
  do {
    const page = await result<Page>(s, who, op, { ...body, limit: 100, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const eventsOf = async (s: Service, type: string, recordId: string): Promise<Event[]> =>
  (await result<{ items: Event[] }>(s, 'erasure', 'events-list', { types: [type], limit: 100 })).items.filter((e) => e.record_id === recordId);

// The tests are independent (each its own data directory and processes) and mostly wait on them: run at once.
describe.concurrent('local mode after kill -9 of the service and of DynamoDB Local', () => {
  it('keeps every transaction DynamoDB Local acknowledged when its Java process is killed right after (two rounds)', async () => {
    // DynamoDB Local answers a transaction before its commit runs (shared/db/client.ts): without
    // the barrier three rounds in four lost the last acknowledged transaction.
    const dataDir = newDir();
    // Asynchronous: the other test of the file runs meanwhile.
    const run = async (...args: string[]) => (await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'test/helpers/durable-writer.ts'), ...args], { cwd: ROOT, encoding: 'utf8', env: childEnv() })).stdout;
    // The rounds are independent (each its own data directory and Java process): run at once.
    const rounds = await Promise.all(
      [0, 1].map(async (round) => {
        const db = join(dataDir, `round-${round}`);
        const keysFile = join(dataDir, `acked-${round}.json`);
        const keys = JSON.parse(await run('write', db)) as string[];
        expect(keys.length).toBeGreaterThanOrEqual(100);
        writeFileSync(keysFile, JSON.stringify(keys));
        const missing = JSON.parse(await run('check', db, keysFile)) as string[];
        expect(missing, `round ${round}`).toEqual([]);
        return keys.length;
      }),
    );
    console.log(`crash: ${rounds[0]! + rounds[1]!} acknowledged transactions over 2 kills of DynamoDB Local, none missing`);
  }, 480_000);

  it('one kill -9 of npm start half-way through imports and creates, a merge, an erasure and webhook retries: after a restart on the same data directory nothing acknowledged is lost and each finishes once', async () => {
    const dataDir = newDir();
    await receiver.start();
    let receiverUp = false;
    receiver.on('/down-then-up', (_req, res) => {
      res.writeHead(receiverUp ? 204 : 503);
      res.end();
    });
    const env = {
      CRM_DATA_DIR: dataDir,
      CRM_DEV_TOKENS: DEV_TOKENS,
      // Chunks of 50 rows and of 50 links (the product's 200 and 250): the kill lands between two.
      CRM_IMPORT_CHUNK_ROWS: '50',
      CRM_MERGE_CHUNK: '50',
      // Many quick retries: deliveries stay pending (and retrying) while the receiver is down.
      WEBHOOK_RETRY_DELAYS: Array.from({ length: 120 }, () => '1').join(','),
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_SWEEP_GRACE_SECONDS: '1',
    };
    const startedAt = Date.now();
    // The erasure worker logs `erasure held` once `contact.erased` is appended and queued, before that step's end is saved (the restarted worker runs the step again).
    const first = await startService({ ...env, CRM_ERASURE_HOLD_AT: 'erased_event' });
    started.push(first);

    // Work that holds still until the kill, set up at once: the erasure (held), the webhooks (retrying), the merge's links.
    const CONTACTS = 12;
    const names = Array.from({ length: CONTACTS }, (_, i) => `restart-${i}`);
    const N = 100;
    const [erasure, webhooks, merge] = await Promise.all([
      (async () => {
        const hook = await result<{ endpoint: Rec; signing_secret: string }>(first, 'erasure', 'webhooks-create', { url: `${receiver.baseUrl}/erasure`, events: ['contact.erased', 'project.updated', 'activity.deleted'] });
        receiver.secret('/erasure', hook.signing_secret);
        const contact = await result(first, 'erasure', 'contacts-create', { first_name: 'Held', email: 'held@crash.example' });
        const project = await result(first, 'erasure', 'projects-create', { name: 'Kept', contact_ids: [contact.id] });
        const activity = await result(first, 'erasure', 'activities-create', { type: 'note', subject: 'only Held', contact_ids: [contact.id] });
        const job = await result(first, 'erasure', 'erasures-create', { contact_id: contact.id });
        await until(() => (/erasure held/.test(first.output()) ? true : undefined), 60_000, 'the erasure worker to hold');
        const held = await result<{ status: string; removed: Record<string, number> }>(first, 'erasure', 'erasures-get', { id: job.id });
        expect(held).toMatchObject({ status: 'pending', removed: { records: 1, activities: 1 } });
        expect(await eventsOf(first, 'contact.erased', contact.id)).toHaveLength(1);
        return { hook, contact, project, activity, job };
      })(),
      (async () => {
        const down = await result<{ endpoint: Rec; signing_secret: string }>(first, 'webhooks', 'webhooks-create', { url: `${receiver.baseUrl}/down-then-up`, events: ['contact.created'] });
        const healthy = await result<{ endpoint: Rec; signing_secret: string }>(first, 'webhooks', 'webhooks-create', { url: `${receiver.baseUrl}/healthy`, events: ['contact.created'] });
        receiver.secret('/down-then-up', down.signing_secret);
        receiver.secret('/healthy', healthy.signing_secret);
        await Promise.all(names.map((name) => result(first, 'webhooks', 'contacts-create', { first_name: name })));
        // Mid-retry: every delivery to the healthy endpoint arrived, the other endpoint's are being retried.
        await until(() => (new Set(receiver.at('/healthy').map((r) => r.headers['webhook-id'])).size === CONTACTS ? true : undefined), 60_000, 'deliveries to the healthy endpoint');
        await until(() => (receiver.at('/down-then-up').length >= 2 * CONTACTS ? true : undefined), 60_000, 'retries to the endpoint that is down');
        return { down, healthy };
      })(),
      (async () => {
        const primary = await result(first, 'merge', 'contacts-create', { first_name: 'Primary' });
        const secondary = await result(first, 'merge', 'contacts-create', { first_name: 'Secondary' });
        for (let i = 0; i < N / 50; i++) {
          await result(first, 'merge', 'activities-batch-create', { items: Array.from({ length: 50 }, (_, j) => ({ type: 'note', subject: `n${i}-${j}`, contact_ids: [secondary.id] })) });
        }
        return { primary, secondary };
      })(),
    ]);

    console.log(`crash: erasure held, webhooks retrying, merge links made at ${Date.now() - startedAt} ms`);
    // Then the imports (four chunks a file: the kill lands after a first chunk, before the last),
    const ROWS = 200;
    const csvOf = (tag: string) => ['first_name,email', ...Array.from({ length: ROWS }, (_, i) => `P${i},${tag}-${i}@crash.example`)].join('\n') + '\n';
    const uploaded = await result<Job>(first, 'writes', 'imports-create', { object_type: 'contacts', file_name: 'file.csv' });
    expect((await fetch(uploaded.upload_url!, { method: 'PUT', body: csvOf('file') })).status).toBe(200);
    await result(first, 'writes', 'imports-start', { id: uploaded.id });
    const inline = await result<Job>(first, 'writes', 'imports-create', { object_type: 'contacts', csv: csvOf('inline') });
    const jobsNow = (s: Service): Promise<Job[]> => Promise.all([uploaded.id, inline.id].map((id) => result<Job>(s, 'writes', 'imports-get', { id })));
    await until(async () => ((await jobsNow(first)).some((j) => j.processed_rows > 0) ? true : undefined), 120_000, 'an import to apply its first chunk');
    // creates in four parallel loops until the kill (the last ones acknowledged just before it),
    const acked: { id: string; at: number }[] = [];
    let stop = false;
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      for (let i = 0; !stop; i++) {
        const r = await call<{ id: string }>(first, 'contacts-create', { first_name: `crash-${loop}-${i}` }, ACCOUNTS.writes.token).catch(() => undefined);
        if (r?.status === 200 && !stop) acked.push({ id: r.body.result.id, at: Date.now() });
      }
    });
    await until(() => (acked.length >= 50 ? true : undefined), 120_000, '50 acknowledged creates');
    console.log(`crash: imports applying, 50 creates acknowledged at ${Date.now() - startedAt} ms`);
    // and the merge: the kill comes as soon as its first link has moved (inside the first chunk,
    // long before the last). One page of the primary's timeline per probe, so probing does not slow the move it watches.
    await result(first, 'merge', 'contacts-merge', { primary_id: merge.primary.id, secondary_id: merge.secondary.id });
    const firstPage = async (s: Service, contactId: string) => (await result<Page>(s, 'merge', 'activities-list', { contact_id: contactId, limit: 100 })).items.length;
    const moved = await until(async () => {
      const n = await firstPage(first, merge.primary.id);
      return n > 0 ? n : undefined;
    }, 60_000, 'the first link');
    const jobs = await jobsNow(first);
    // What each check after the restart compares with, read just before the kill.
    const pendingBefore = (await result<{ deliveries: WebhookDelivery[] }>(first, 'webhooks', 'webhooks-deliveries', { endpoint_id: webhooks.down.endpoint.id, limit: 100 })).deliveries;
    const healthyRecorded = (await result<{ deliveries: WebhookDelivery[] }>(first, 'webhooks', 'webhooks-deliveries', { endpoint_id: webhooks.healthy.endpoint.id, limit: 100 })).deliveries;
    const deliveredBefore = new Set(healthyRecorded.filter((d) => d.status === 'delivered').map((d) => d.id));
    stop = true;
    const killAt = Date.now();
    await crash(first);
    await Promise.allSettled(loops);
    console.log(`crash: killed at ${killAt - startedAt} ms: imports at ${jobs.map((j) => `${j.processed_rows}/${ROWS}`).join(' and ')} rows, ${moved}${moved === N ? '+' : ''} of ${N} links moved, the erasure held, ${pendingBefore.length} deliveries pending`);
    expect(jobs.every((j) => j.status === 'processing' || j.status === 'queued'), JSON.stringify(jobs)).toBe(true);
    expect(moved).toBeLessThan(N);
    expect(pendingBefore).toHaveLength(CONTACTS);
    expect(pendingBefore.every((d) => d.status === 'pending')).toBe(true);
    const positions = JSON.parse(readFileSync(join(dataDir, 'stream-positions.json'), 'utf8')) as { shards: Record<string, string> };
    expect(Object.keys(positions.shards).length).toBeGreaterThan(0);

    // The restart: the receiver is up again, the erasure no longer held.
    receiverUp = true;
    const restartedAt = Date.now();
    const second = await startService(env);
    started.push(second);
    console.log(`crash: restarted in ${Date.now() - restartedAt} ms`);

    const checks = Promise.all([
      // Creates and imports.
      (async () => {
        const missing: string[] = [];
        await Promise.all(acked.map(async ({ id }) => {
          if ((await call(second, 'contacts-get', { id }, ACCOUNTS.writes.token)).status !== 200) missing.push(id);
        }));
        console.log(`crash: ${acked.length} acknowledged creates, the last ${killAt - acked.at(-1)!.at} ms before the kill; ${missing.length} missing after the restart`);
        expect(missing).toEqual([]);
        for (const job of [uploaded, inline]) {
          const got = await until(async () => {
            const j = await result<Job>(second, 'writes', 'imports-get', { id: job.id });
            return j.status !== 'processing' && j.status !== 'queued' ? j : undefined;
          }, 480_000, `import ${job.id} to end after the restart`);
          expect(got, JSON.stringify(got)).toMatchObject({ status: 'completed', processed_rows: ROWS, error_count: 0, failure_reason: '' });
          expect(got.created_count + got.updated_count).toBe(ROWS);
        }
        // Every row of both files landed, once (the loops' creates have no email).
        const emails = (await all(second, 'writes', 'contacts-list')).flatMap((c) => (c.email ? [String(c.email)] : []));
        const expected = ['file', 'inline'].flatMap((tag) => Array.from({ length: ROWS }, (_, i) => `${tag}-${i}@crash.example`));
        expect(emails.length).toBe(expected.length);
        expect(new Set(emails)).toEqual(new Set(expected));
        console.log(`crash: both imports completed ${Date.now() - restartedAt} ms after the restart began`);
      })(),
      // The merge.
      (async () => {
        await until(async () => ((await firstPage(second, merge.secondary.id)) === 0 ? true : undefined), 120_000, 'every link moved after the restart');
        const onPrimary = await all(second, 'merge', 'activities-list', { contact_id: merge.primary.id });
        expect(onPrimary).toHaveLength(N);
        expect(onPrimary.every((a) => JSON.stringify(a.contact_ids) === JSON.stringify([merge.primary.id]))).toBe(true);
        expect((await call(second, 'contacts-get', { id: merge.secondary.id }, ACCOUNTS.merge.token)).status).toBe(404);
        const trash = await result<{ items: Array<{ record: Rec }> }>(second, 'merge', 'trash-list', { family: 'contacts' });
        expect(trash.items.map((t) => t.record.id)).toEqual([merge.secondary.id]);
      })(),
      // The erasure.
      (async () => {
        const { contact, project, activity, job, hook } = erasure;
        const done = await until(async () => {
          const e = await result<{ status: string; removed: Record<string, number> }>(second, 'erasure', 'erasures-get', { id: job.id });
          return e.status === 'completed' ? e : undefined;
        }, 120_000, 'the erasure to complete after the restart');
        expect(done.removed).toMatchObject({ records: 1, activities: 1 });
        expect((await result<{ items: Rec[] }>(second, 'erasure', 'erasures-list', {})).items.filter((e) => e.contact_id === contact.id)).toHaveLength(1);
        // The cascade's update of the project follows from the stream (its position survived the crash).
        await until(async () => ((await result<{ contact_ids: string[] }>(second, 'erasure', 'projects-get', { id: project.id })).contact_ids.length === 0 ? true : undefined), 120_000, 'the project unlinked');
        await until(async () => ((await eventsOf(second, 'project.updated', project.id)).length > 0 ? true : undefined), 120_000, 'project.updated');
        const erased = await eventsOf(second, 'contact.erased', contact.id);
        expect(erased).toHaveLength(1);
        expect(erased[0]!.data).toEqual({ id: contact.id });
        expect(await eventsOf(second, 'project.updated', project.id)).toHaveLength(1);
        const deleted = await eventsOf(second, 'activity.deleted', activity.id);
        expect(deleted).toHaveLength(1);
        expect(deleted[0]!.data).toEqual({ id: activity.id });
        // One delivery each, all delivered (the receiver dedupes by webhook-id anyway).
        const deliveries = await until(async () => {
          const d = (await result<{ deliveries: Array<{ event_type: string; status: string }> }>(second, 'erasure', 'webhooks-deliveries', { endpoint_id: hook.endpoint.id, limit: 100 })).deliveries;
          return d.length >= 3 && d.every((x) => x.status === 'delivered') ? d : undefined;
        }, 120_000, 'the erasure\'s deliveries');
        expect(deliveries.map((d) => d.event_type).sort()).toEqual(['activity.deleted', 'contact.erased', 'project.updated']);
        const ids = new Set(receiver.at('/erasure').map((r) => r.payload?.id));
        expect([...ids].filter((id) => id === erased[0]!.id)).toHaveLength(1);
      })(),
      // The webhooks.
      (async () => {
        const arrived = () => new Set(receiver.at('/down-then-up').filter((r) => r.at >= restartedAt && r.verified).map((r) => r.payload!.data.first_name as string));
        await until(() => (arrived().size === CONTACTS ? true : undefined), 120_000, `all ${CONTACTS} pending deliveries after the restart`);
        expect([...arrived()].sort()).toEqual([...names].sort());
        const after = await until(async () => {
          const { deliveries } = await result<{ deliveries: WebhookDelivery[] }>(second, 'webhooks', 'webhooks-deliveries', { endpoint_id: webhooks.down.endpoint.id, limit: 100 });
          return deliveries.every((d) => d.status === 'delivered') ? deliveries : undefined;
        }, 60_000, 'every delivery recorded delivered');
        expect(after).toHaveLength(CONTACTS);
        expect(new Set(after.map((d) => d.id))).toEqual(new Set(pendingBefore.map((d) => d.id)));
        // Writes acknowledged before the crash are all there.
        expect((await all(second, 'webhooks', 'contacts-list')).map((c) => c.first_name).sort()).toEqual([...names].sort());
        // Nothing already delivered is sent again: after the restart the healthy endpoint only sees
        // attempts that were in flight at the crash (posted, not yet recorded: at least once).
        const healthyAfter = await result<{ deliveries: WebhookDelivery[] }>(second, 'webhooks', 'webhooks-deliveries', { endpoint_id: webhooks.healthy.endpoint.id, limit: 100 });
        expect(healthyAfter.deliveries).toHaveLength(CONTACTS);
        expect(healthyAfter.deliveries.every((d) => d.status === 'delivered' && d.attempt_count === 1)).toBe(true);
        const resentAfterRestart = receiver.at('/healthy').filter((r) => r.at >= restartedAt).map((r) => r.headers['webhook-id']!);
        expect(resentAfterRestart.filter((id) => deliveredBefore.has(id))).toEqual([]);
        console.log(`restart: ${deliveredBefore.size} of ${CONTACTS} healthy deliveries recorded before the crash; ${resentAfterRestart.length} in-flight attempts re-run after it`);
      })(),
    ]);
    // A check that fails shows what the restarted service printed.
    await checks.catch((error: Error) => {
      throw new Error(`${error.message}\n--- the restarted service's output (last 4,000 characters):\n${second.output().slice(-4000)}`, { cause: error });
    });
    console.log(`crash: every check passed ${Date.now() - restartedAt} ms after the restart began`);
    await crash(second);
  }, 900_000);
});
