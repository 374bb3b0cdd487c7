/**
 * `npm start`'s default layout (issue 24, "Hostile input" 3): the stream, delivery and import
 * workers run in a worker thread (local/workers-thread.ts), the API in the main thread. The
 * workers do their work there (search entries, an import) and answer drain() and stop(); the
 * latency it buys is measured by `npm run bench:mixed` (docs/performance.md, "Mixed load").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/topology.js';
import type { LocalStack } from '../../local/runtime.js';
import { startFileStack } from '../helpers/local-stack.js';
import { runsInBackground } from '../../local/triggers.js';

const OWN = ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_S3', 'IMPORTS_BUCKET', 'IMPORTS_QUEUE_URL'];
let saved: Record<string, string | undefined>;
let stack: LocalStack;
beforeAll(async () => {
  // startLocalStack points the process at its queues: give them back after.
  saved = Object.fromEntries(OWN.map((k) => [k, process.env[k]]));
  stack = await startFileStack({ workersInThread: true });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const call = async <T>(op: string, body: unknown) => {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${stack.tokens[0]!.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result: T };
  expect(json.ok, JSON.stringify(json)).toBe(true);
  return json.result;
};

describe('local workers in a worker thread', () => {
  it('runs every background function of the topology there (stream, queues, schedule, SMTP)', { timeout: 60_000 }, async () => {
    expect(Object.keys(stack.functions).sort()).toEqual(FUNCTIONS.filter(runsInBackground).map((f) => f.name).sort());
    for (const fn of Object.values(stack.functions)) await fn.drain(30_000);
    expect(stack.smtp.port).toBeGreaterThan(0);
  });

  it('index records for search and run imports there, and answer drain()', { timeout: 60_000 }, async () => {
    await call('contacts-create', { first_name: 'Threaded', last_name: 'Worker', email: 'threaded@example.com' });
    await stack.poller.drain(30_000);
    const found = await call<{ items: Array<{ email: string }> }>('contacts-list', { search: 'threaded worker' });
    expect(found.items.map((c) => c.email)).toEqual(['threaded@example.com']);

    const job = await call<{ id: string }>('imports-create', { object_type: 'contacts', csv: 'First Name,Email\nAda,ada@thread.example\nGrace,grace@thread.example\n' });
    const deadline = Date.now() + 30_000;
    let status = '';
    while (!['completed', 'failed'].includes(status) && Date.now() < deadline) {
      status = (await call<{ status: string }>('imports-get', { id: job.id })).status;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('completed');
    await stack.imports.worker.drain(30_000);
    await stack.queueWorker.drain(30_000);
  });
});
