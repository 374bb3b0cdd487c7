/**
 * Local mode is a loop over the topology (functions/topology.ts), like the CDK app: every trigger
 * kind has a local adapter (local/triggers.ts), every function that is not the API's runs in the
 * background with its handler loaded from its entry, the API server serves every `http` function
 * and the `http-default` one, and an `object` trigger's mail goes through the bucket to its
 * function. A new worker needs its entry in WORKERS and nothing in local/.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionSpec, type TriggerKind, WORKERS } from '../../functions/topology.js';
import { startBackgroundWorkers } from '../../local/background-workers.js';
import type { LocalStack } from '../../local/runtime.js';
import { startFileStack } from '../helpers/local-stack.js';
import { LOCAL_TRIGGERS } from '../../local/triggers.js';
import { EXPORT_LEASE_MS } from '../../shared/exports/worker.js';
import { IMPORT_LEASE_MS } from '../../shared/imports/worker.js';

/** The kinds the local API server runs; every other kind runs in the background. */
const API_KINDS: readonly TriggerKind[] = ['http', 'authorizer', 'http-default'];
const background = (functions: readonly FunctionSpec[]) => functions.filter((f) => !API_KINDS.includes(f.trigger.kind)).map((f) => f.name);

let stack: LocalStack;
beforeAll(async () => {
  // The stack points this process (its own fork) at its queues, on the file's table in the worker's DynamoDB Local.
  stack = await startFileStack();
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

const call = async <T>(op: string, body: unknown) => {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${stack.tokens[0]!.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result: T };
  expect(json.ok, JSON.stringify(json)).toBe(true);
  return json.result;
};

describe('local mode runs the topology', () => {
  it('has a local adapter for the trigger kind of every function', () => {
    for (const fn of FUNCTIONS) expect(LOCAL_TRIGGERS[fn.trigger.kind], `${fn.name}: ${fn.trigger.kind}`).toBeDefined();
    expect(Object.entries(LOCAL_TRIGGERS).filter(([, adapter]) => adapter === 'api').map(([kind]) => kind).sort()).toEqual([...API_KINDS].sort());
  });

  it('keeps a job message invisible for the job lease locally', () => {
    const local = (name: string) => {
      const trigger = WORKERS.find((w) => w.name === name)!.trigger;
      return trigger.kind === 'queue' ? trigger.local : undefined;
    };
    expect(local('importWorker')).toMatchObject({ visibilityTimeoutSeconds: IMPORT_LEASE_MS / 1000, extendWhileHandling: true });
    expect(local('exportWorker')).toMatchObject({ visibilityTimeoutSeconds: EXPORT_LEASE_MS / 1000, extendWhileHandling: true });
  });

  it('starts every non-API function of the topology, and each answers drain()', async () => {
    expect(background(WORKERS).length).toBeGreaterThanOrEqual(6);
    expect(Object.keys(stack.functions).sort()).toEqual(background(FUNCTIONS).sort());
    for (const fn of Object.values(stack.functions)) {
      expect(fn.kind).toBe(FUNCTIONS.find((f) => f.name === fn.name)!.trigger.kind);
      await fn.drain(30_000);
    }
  });

  it('serves every http function of the topology behind the authorizer, and the rest through http-default', async () => {
    const post = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
    for (const fn of FUNCTIONS) {
      if (fn.trigger.kind !== 'http') continue;
      const res = await post(`/api/${fn.trigger.operation}`);
      expect(res.status, fn.name).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('auth.unauthorized');
    }
    const unknown = await post('/api/no-such-operation', { authorization: `Bearer ${stack.tokens[0]!.token}` });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('api.unknown_operation');
    const get = await fetch(`${stack.baseUrl}/api/contacts-list`);
    expect(get.status).toBe(405);
  });

  it('stores mail sent to the SMTP listener in the inbound bucket, then runs the inbound function on it', async () => {
    const { address } = stack.inboundAddresses[0]!;
    const contact = await call<{ id: string }>('contacts-create', { first_name: 'Mailer', email: 'mailer@topology.example' });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: stack.smtp.port, secure: false, ignoreTLS: true });
    const subject = `topology ${randomUUID()}`;
    let response: string;
    try {
      response = ((await transport.sendMail({ from: 'mailer@topology.example', to: address, subject, text: 'through the bucket' })) as { response: string }).response;
    } finally {
      transport.close();
    }
    const key = /stored \((inbound\/[0-9a-f-]{36})\)/.exec(response)?.[1];
    expect(key, response).toBeDefined();
    const s3 = new S3Client({ endpoint: stack.resources.awsEndpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const stored = await (await s3.send(new GetObjectCommand({ Bucket: stack.resources.buckets.inbound, Key: key }))).Body!.transformToString();
      expect(stored).toContain(`for <${address}>`);
      expect(stored).toContain(subject);
    } finally {
      s3.destroy();
    }
    // The 250 came after the function ran: the email is there at once.
    const emails = await call<{ items: Array<{ subject: string; matched_contact_ids: string[] }> }>('inbound-emails-list', {});
    const email = emails.items.find((e) => e.subject === subject);
    expect(email?.matched_contact_ids).toEqual([contact.id]);
  });

  it('runs a new worker from its topology entry alone', async () => {
    const runs: unknown[] = [];
    const twice = new Promise<void>((resolve) => {
      (globalThis as { __tickWorker?: (event: unknown) => void }).__tickWorker = (event) => {
        if (runs.push(event) === 2) resolve();
      };
    });
    const tick: FunctionSpec = { name: 'tick', entry: '../test/helpers/tick-worker.ts', trigger: { kind: 'schedule', everyMinutes: 1, local: { everySeconds: 0.05 } }, bindings: { table: 'read' }, timeoutSeconds: 10, group: 'workers' };
    const workers = await startBackgroundWorkers(stack.resources, {}, [tick]);
    try {
      expect(Object.keys(workers.functions)).toEqual(['tick']);
      await twice;
      expect(runs[0]).toMatchObject({ 'detail-type': 'Scheduled Event', source: 'aws.events' });
    } finally {
      await workers.stop();
    }
  });
});
