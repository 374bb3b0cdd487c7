import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamo.js';
import type { WebhookDelivery } from '../../shared/schemas/webhooks.js';
import { Receiver, waitFor } from '../helpers/webhook-harness.js';
import { descendants, processTable } from '../helpers/processes.js';

/**
 * Contract §7: with a data directory, a restart (even after a crash) loses no acknowledged write,
 * and deliveries that were pending are carried out after it. The local service runs as a child
 * process (`tsx local/start.ts`, what `npm start` runs) with CRM_DATA_DIR; it is killed with
 * SIGKILL in the middle of its retries, while the receiver is down, and started again on the same
 * directory once the receiver is up: every delivery arrives, and the stream does not raise the
 * events it had already handled again.
 */
const REPO = join(import.meta.dirname, '..', '..');
const CONTACTS = 12;

interface Service {
  child: ChildProcess;
  baseUrl: string;
  token: string;
  pids: number[];
  output: () => string;
}


const started: Service[] = [];

async function startService(dataDir: string): Promise<Service> {
  const port = await freePort();
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'CRM_DEV_TOKENS', 'LOG_LEVEL', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'].includes(k)),
  );
  const env = {
    ...inherited,
    PORT: String(port),
    SMTP_PORT: '0', // any free port: 2525 may be taken by another local service
    CRM_DATA_DIR: dataDir,
    // Many quick retries: deliveries stay pending (and retrying) while the receiver is down.
    WEBHOOK_RETRY_DELAYS: Array.from({ length: 30 }, () => '1').join(','),
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_SWEEP_GRACE_SECONDS: '1',
  };
  const child = spawn(join(REPO, 'node_modules', '.bin', 'tsx'), ['local/start.ts'], { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const deadline = Date.now() + 90_000;
  while (!/token for account .*: (\S+)/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`local service did not get ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const service = { child, baseUrl: `http://127.0.0.1:${port}`, token: /token for account .*: (\S+)/.exec(output)![1]!, pids: descendants(child.pid!), output: () => output };
  started.push(service);
  return service;
}

/** kill -9 of the whole service (its process group, then anything of its tree still alive), until every process is gone. */
async function crash(service: Service): Promise<void> {
  const pids = descendants(service.child.pid!);
  try {
    process.kill(-service.child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone with the group
    }
  }
  await waitFor(() => {
    const alive = processTable();
    return pids.every((pid) => !alive.has(pid));
  }, 20_000, 'every process of the service to exit');
}

async function call<T>(service: Service, op: string, body: unknown): Promise<T> {
  const res = await fetch(`${service.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result: T; error?: unknown };
  if (!json.ok) throw new Error(`${op}: ${res.status} ${JSON.stringify(json.error)}`);
  return json.result;
}

let dataDir: string;
let receiver: Receiver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-restart-'));
  receiver = await new Receiver().start();
});

afterAll(async () => {
  for (const service of started) if (service.child.exitCode === null) await crash(service).catch(() => undefined);
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('local mode restart with CRM_DATA_DIR', () => {
  it('after kill -9 in the middle of retries, every pending delivery arrives once the receiver is up; handled events are not raised again', async () => {
    let receiverUp = false;
    receiver.on('/down-then-up', (_req, res) => {
      res.writeHead(receiverUp ? 204 : 503);
      res.end();
    });

    const first = await startService(dataDir);
    const down = await call<{ endpoint: { id: string }; signing_secret: string }>(first, 'webhooks-create', { url: `${receiver.baseUrl}/down-then-up`, events: ['contact.created'] });
    const healthy = await call<{ endpoint: { id: string }; signing_secret: string }>(first, 'webhooks-create', { url: `${receiver.baseUrl}/healthy`, events: ['contact.created'] });
    receiver.secret('/down-then-up', down.signing_secret);
    receiver.secret('/healthy', healthy.signing_secret);
    const names = Array.from({ length: CONTACTS }, (_, i) => `restart-${i}`);
    for (const name of names) await call(first, 'contacts-create', { first_name: name });

    // Mid-retry: every delivery to the healthy endpoint arrived, the other endpoint's are being retried.
    await waitFor(() => new Set(receiver.at('/healthy').map((r) => r.headers['webhook-id'])).size === CONTACTS, 30_000, 'deliveries to the healthy endpoint');
    await waitFor(() => receiver.at('/down-then-up').length >= 2 * CONTACTS, 30_000, 'retries to the endpoint that is down');
    const before = await call<{ deliveries: WebhookDelivery[] }>(first, 'webhooks-deliveries', { endpoint_id: down.endpoint.id, limit: 100 });
    expect(before.deliveries).toHaveLength(CONTACTS);
    expect(before.deliveries.every((d) => d.status === 'pending')).toBe(true);
    const healthyRecorded = (await call<{ deliveries: WebhookDelivery[] }>(first, 'webhooks-deliveries', { endpoint_id: healthy.endpoint.id, limit: 100 })).deliveries;
    const deliveredBefore = new Set(healthyRecorded.filter((d) => d.status === 'delivered').map((d) => d.id));
    await crash(first);
    const positions = JSON.parse(readFileSync(join(dataDir, 'stream-positions.json'), 'utf8')) as { shards: Record<string, string> };
    expect(Object.keys(positions.shards).length).toBeGreaterThan(0);

    receiverUp = true;
    const restartedAt = Date.now();
    const second = await startService(dataDir);
    const delivered = (r: { verified: boolean }) => r.verified;
    const arrived = () => new Set(receiver.at('/down-then-up').filter((r) => r.at >= restartedAt && delivered(r)).map((r) => r.payload!.data.first_name as string));
    await waitFor(() => arrived().size === CONTACTS, 120_000, `all ${CONTACTS} pending deliveries after the restart`);
    expect([...arrived()].sort()).toEqual([...names].sort());

    const after = await waitFor(async () => {
      const { deliveries } = await call<{ deliveries: WebhookDelivery[] }>(second, 'webhooks-deliveries', { endpoint_id: down.endpoint.id, limit: 100 });
      return deliveries.every((d) => d.status === 'delivered') ? deliveries : undefined;
    }, 20_000, 'every delivery recorded delivered');
    expect(after).toHaveLength(CONTACTS);
    expect(new Set(after.map((d) => d.id))).toEqual(new Set(before.deliveries.map((d) => d.id)));
    // Writes acknowledged before the crash are all there.
    const contacts = await call<{ items: { first_name: string }[] }>(second, 'contacts-list', { limit: 100 });
    expect(contacts.items.map((c) => c.first_name).sort()).toEqual([...names].sort());
    // Nothing already delivered is sent again: after the restart the healthy endpoint only sees
    // attempts that were in flight at the crash (posted, not yet recorded: at least once).
    const healthyAfter = await call<{ deliveries: WebhookDelivery[] }>(second, 'webhooks-deliveries', { endpoint_id: healthy.endpoint.id, limit: 100 });
    expect(healthyAfter.deliveries).toHaveLength(CONTACTS);
    expect(healthyAfter.deliveries.every((d) => d.status === 'delivered' && d.attempt_count === 1)).toBe(true);
    const resentAfterRestart = receiver.at('/healthy').filter((r) => r.at >= restartedAt).map((r) => r.headers['webhook-id']!);
    expect(resentAfterRestart.filter((id) => deliveredBefore.has(id))).toEqual([]);
    console.log(`restart: ${deliveredBefore.size} of ${CONTACTS} healthy deliveries recorded before the crash; ${resentAfterRestart.length} in-flight attempts re-run after it`);
    console.log(`restart: ${CONTACTS} pending deliveries arrived ${Math.max(...receiver.at('/down-then-up').filter((r) => r.at >= restartedAt).map((r) => r.at)) - restartedAt} ms after the restart began`);
    await crash(second);
  }, 240_000);
});
