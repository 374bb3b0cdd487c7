/**
 * One account's bulk work never delays another's webhooks or search (contract §4, §6): the
 * local stack (one DynamoDB Local, every worker in this process), account A batch-creates 1,000 contacts,
 * and while A writes, then while A's backlog is worked on, account B creates contacts one after the
 * other and waits for its webhook and for search to find it. The stream only routes; the changes queue (FIFO, one group per account) gives A's
 * backlog one consumer and B another, and A holds at most its share of the worker's item slots
 * (docs/performance.md, "Fairness").
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/runtime.js';
import { Receiver, registerEndpoint, waitFor } from '../helpers/webhook-harness.js';
import type { AuthContext } from '../../shared/http/operation.js';
import { ok } from '../helpers/api.js';

const OWN = ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'CHANGES_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_S3', 'IMPORTS_BUCKET', 'IMPORTS_QUEUE_URL', 'CRM_RATE_LIMIT', 'CRM_BACKLOG_THRESHOLD_MS'];
let saved: Record<string, string | undefined>;
let stack: LocalStack;
let receiver: Receiver;
const A: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
const B: AuthContext = { accountId: randomUUID(), userId: randomUUID() };
const logged: Array<{ at: number; line: string }> = [];
/** A's bulk: this many batch-creates of 100 contacts. */
const BULK_CALLS = 10;
const originalLog = console.log;

beforeAll(async () => {
  saved = Object.fromEntries(OWN.map((k) => [k, process.env[k]]));
  // A's thirty calls in a few seconds: no rate limit in the way. A backlog is logged after 1 s.
  Object.assign(process.env, { CRM_RATE_LIMIT: '0', CRM_BACKLOG_THRESHOLD_MS: '1000' });
  console.log = (...args: unknown[]) => {
    logged.push({ at: Date.now(), line: args.map(String).join(' ') });
  };
  stack = await startLocalStack({ smtpPort: 0 });
  receiver = await new Receiver().start();
}, 90_000);
afterAll(async () => {
  console.log = originalLog;
  await receiver?.close();
  await stack?.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** B creates a contact and waits for its webhook and for search to find it: both latencies in ms. */
async function probe(n: number): Promise<{ delivery: number; search: number }> {
  const name = `Quiet${n}${randomUUID().slice(0, 8)}`;
  const start = Date.now();
  const created = await ok<{ id: string }>('contacts-create', { first_name: name, last_name: 'Probe' }, B);
  const [delivery, search] = await Promise.all([
    waitFor(() => receiver.at('/b').find((r) => r.payload?.data.id === created.id), 60_000, `B's webhook ${n}`).then((r) => r.at - start),
    waitFor(async () => (await ok<{ items: unknown[] }>('contacts-list', { search: name }, B)).items.length === 1, 60_000, `B's search ${n}`).then(() => Date.now() - start),
  ]);
  return { delivery, search };
}

describe('a quiet account next to a bulk-writing one', () => {
  it('gets its webhooks and search while the other\'s 1,000 batch-created contacts are still being worked on, not after them', { timeout: 240_000 }, async () => {
    await registerEndpoint(B, receiver, '/b', ['contact.created']);
    // B alone first: what this machine gives a quiet account right now (under other load it is slower than the contract's 2 s).
    const alone: Array<{ delivery: number; search: number }> = [];
    for (let n = 0; n < 4; n++) alone.push(await probe(n));
    alone.shift(); // the first one warms the handlers up

    // A's bulk, as in the issue: 1,000 contacts in ten batch-creates, two at a time; B probes while
    // A writes (B's own calls then share DynamoDB Local with A's: the local fair gate) and after.
    let nextCall = 0;
    const writers = Array.from({ length: 2 }, async () => {
      for (let call = nextCall++; call < BULK_CALLS; call = nextCall++) {
        const items = Array.from({ length: 100 }, (_, i) => ({ first_name: `Bulk${call}x${i}`, last_name: 'Importer', email: `bulk${call}.${i}@a.example`, phone: `+1 (555) ${100 + call}-${1000 + i}` }));
        const { results } = await ok<{ results: Array<{ ok: boolean }> }>('contacts-batch-create', { items }, A);
        expect(results.every((r) => r.ok)).toBe(true);
      }
    });
    let writing = true;
    const written = Promise.all(writers).finally(() => (writing = false));
    const busy: Array<{ delivery: number; search: number }> = [];
    while (writing) busy.push(await probe(200 + busy.length));
    await written;
    const whileWriting = busy.length;
    expect(whileWriting, 'probes while A writes').toBeGreaterThan(0);
    const lastOfA = () => ok<{ items: unknown[] }>('contacts-list', { search: `Bulk${BULK_CALLS - 1}x99` }, A);
    // A's backlog is there: its last contact is not searchable yet.
    expect((await lastOfA()).items).toHaveLength(0);
    // B probes while A's backlog drains.
    for (let n = 0; n < 6; n++) busy.push(await probe(100 + n));
    const lastProbeAt = Date.now();
    const report = (xs: typeof busy) => `webhook ${xs.map((x) => x.delivery).join(' ')} / search ${xs.map((x) => x.search).join(' ')}`;
    originalLog(`fairness: B alone: ${report(alone)}\nfairness: B beside A's bulk (the first ${whileWriting} while A writes): ${report(busy)}`);
    expect(receiver.at('/b').every((r) => r.verified)).toBe(true);
    // A's backlog was visible while B probed: its line came before B's last probe ended.
    const behindAt = logged.find((l) => l.line.includes(A.accountId) && l.line.includes('behind'))?.at;
    expect(behindAt, 'A\'s backlog line').toBeLessThan(lastProbeAt);
    const drainedAt = () => logged.find((l) => l.line.includes(A.accountId) && l.line.includes('drained'))?.at;
    // None of B's probes waited for A's backlog: they all ended before A's backlog drained (an
    // order, whatever the machine's speed; when every account's work was one line, B waited for
    // A's whole backlog: 65 s after 3,000 contacts). Their times are held only loosely here, at
    // 5 times B's own alone (at least 10 s): the 2 s promise is measured by `npm run bench:fair`
    // (20,000 contacts, docs/performance.md), not by six probes on a machine shared with other files.
    for (const key of ['delivery', 'search'] as const) {
      const bound = Math.max(10_000, 5 * Math.max(...alone.map((x) => x[key])));
      expect(Math.max(...busy.map((x) => x[key])), `${key} slowest beside A, bound ${bound} ms: ${report(busy)}`).toBeLessThanOrEqual(bound);
    }

    // A's work is all done in the end: its last contact is found, and its backlog was logged as drained.
    await stack.poller.drain(120_000);
    expect((await lastOfA()).items).toHaveLength(1);
    await waitFor(() => drainedAt() !== undefined, 10_000, 'the drained line');
    expect(drainedAt()!, 'A drained after B\'s last probe').toBeGreaterThan(lastProbeAt);
  });
});
