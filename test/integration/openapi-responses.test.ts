import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalExports, startLocalExports } from '../../local/exports.js';
import { processInboundMessage } from '../../shared/domain/inbound-emails.js';
import { type FauxqsServer, startFauxqs } from 'fauxqs';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { docsRoutes } from '../../local/docs-routes.js';
import { createApiServer } from '../../local/server.js';
import { responseValidator } from '../helpers/openapi-validator.js';
import { newAccount, startServer, type TestServer } from '../helpers/api.js';
import { issueToken } from '../../shared/auth/tokens.js';
import { bindingEnv } from '../../shared/config/bindings.js';

let server: TestServer;
const check = responseValidator();
/** Every reply seen, checked against the schema documented for its operation and status. */
const seen: { op: string; status: number }[] = [];

async function call(op: string, body: unknown = {}, opts: Parameters<TestServer['call']>[2] = {}) {
  const reply = await server.call(op, body, opts);
  seen.push({ op, status: reply.status });
  expect(check(op, reply.status, reply.body), `${op} ${reply.status} ${JSON.stringify(reply.body)}`).toEqual([]);
  return reply as { status: number; body: { ok: boolean; result?: Record<string, never> & { id: string } } };
}

let queue: FauxqsServer;
let imports: LocalImports;
let exportsLocal: LocalExports;
beforeAll(async () => {
  process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true'; // as in local mode: a loopback receiver URL
  // webhooks-test / -resend / -recover queue deliveries: a local SQS-compatible queue (nothing consumes it here).
  queue = await startFauxqs({ port: 0, logger: false });
  Object.assign(process.env, { DELIVERY_QUEUE_URL: queue.createQueue('openapi-responses').queueUrl, AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${queue.port}` });
  // Erasures (contract §18) queue their job; nothing consumes it here (test/integration/erasure.test.ts runs them).
  process.env.ERASURES_QUEUE_URL = queue.createQueue('openapi-responses-erasures').queueUrl;
  // Imports: the bucket, the import queue and its worker on the same local S3/SQS server.
  imports = await startLocalImports(`http://127.0.0.1:${queue.port}`);
  // --- exports (contract §16): the export queue and worker on the same server.
  exportsLocal = await startLocalExports(`http://127.0.0.1:${queue.port}`);
  // Reassignments (contract §20) queue their job on the index-build queue; nothing consumes it here.
  process.env[bindingEnv('indexBuildsQueue')] = queue.createQueue('openapi-responses-index-builds').queueUrl;
  server = await startServer();
});
afterAll(async () => {
  await server.close();
  await imports.stop();
  await exportsLocal.stop();
  await queue.stop();
});

describe('real responses match the OpenAPI document', () => {
  it('successes of every family', async () => {
    const company = (await call('companies-create', { name: 'Doc Co', employee_count: 5, tags: ['x'] })).body.result!;
    const source = (await call('sources-create', { name: 'Doc source' })).body.result!;
    const field = (await call('custom-fields-create', { entity_type: 'contact', name: 'Score', field_type: 'number' })).body.result!;
    const contact = (await call('contacts-create', { first_name: 'Doc', company_id: company.id, source_id: source.id, custom_fields: { [field.id]: 3 } })).body.result!;
    for (const [family, id] of [['companies', company.id], ['sources', source.id], ['custom-fields', field.id], ['contacts', contact.id]] as const) {
      await call(`${family}-get`, { id });
      await call(`${family}-list`, {});
    }
    await call('contacts-update', { id: contact.id, tags: ['vip'] });
    await call('companies-update', { id: company.id, domain: 'doc.example' });
    await call('sources-update', { id: source.id, name: 'Renamed' });
    await call('custom-fields-update', { id: field.id, description: 'd' });
    await call('contacts-list', { limit: 1, tags: ['vip'] });
    const project = (await call('projects-create', { name: 'Doc project', company_id: company.id, contact_ids: [contact.id], amount: 100, currency: 'EUR' })).body.result!;
    const activity = (await call('activities-create', { type: 'task', subject: 'Doc', project_id: project.id, contact_ids: [contact.id] })).body.result!;
    for (const [family, id] of [['projects', project.id], ['activities', activity.id]] as const) {
      await call(`${family}-get`, { id });
      await call(`${family}-list`, {});
    }
    await call('projects-update', { id: project.id, status: 'completed' });
    await call('activities-update', { id: activity.id, completed: true });
    await call('activities-list', { contact_id: contact.id, types: ['task'], completed: true });
    await call('projects-list', { status: ['completed'], company_id: company.id });
    await call('activities-delete', { id: activity.id });
    await call('projects-delete', { id: project.id });
    const hook = (await call('webhooks-create', { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] })).body.result!;
    const endpointId = (hook as unknown as { endpoint: { id: string } }).endpoint.id;
    await call('webhooks-list', {});
    await call('webhooks-get', { id: endpointId });
    await call('webhooks-update', { id: endpointId, is_active: false });
    await call('webhooks-deliveries', { endpoint_id: endpointId });
    await call('webhooks-rotate-secret', { id: endpointId, grace_period_seconds: 60 });
    const tested = await call('webhooks-test', { id: endpointId });
    const testDelivery = tested.body.result!;
    await call('webhooks-resend', { endpoint_id: endpointId, delivery_id: testDelivery.id });
    // --- change log (contract §12) ---
    await call('webhooks-update', { id: endpointId, is_active: true });
    // Recover refuses an inactive endpoint (contract §6): called once it is active again.
    await call('webhooks-recover', { endpoint_id: endpointId, since: new Date(Date.now() - 3_600_000).toISOString() });
    await call('webhooks-replay', { endpoint_id: endpointId, since: new Date(Date.now() - 3_600_000).toISOString(), types: ['contact.created'] });
    await call('events-list', { limit: 5 });
    // --- end change log ---
    await call('webhooks-delete', { id: endpointId });
    const job = (await call('imports-create', { object_type: 'contacts', csv: 'First Name,Email\nAda,ada@doc.example\nBob,not-an-email\n' })).body.result!;
    await call('imports-get', { id: job.id });
    await call('imports-list', {});
    await call('imports-errors', { import_id: job.id });
    const upload = (await call('imports-create', { object_type: 'companies', file_name: 'c.csv' })).body.result as unknown as { id: string; upload_url: string };
    expect((await fetch(upload.upload_url, { method: 'PUT', body: 'Name,Domain\nDoc Co,doc.example\n' })).ok).toBe(true);
    await call('imports-start', { id: upload.id });
    const idle = (await call('imports-create', { object_type: 'contacts' })).body.result!;
    await call('imports-cancel', { id: idle.id });
    // --- exports (contract §16) ---
    const exported = (await call('exports-create', { object_type: 'contacts', filters: { tags: ['vip'] } })).body.result!;
    for (let i = 0; i < 200 && (await call('exports-get', { id: exported.id })).body.result?.status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await call('exports-get', { id: exported.id })).body.result).toMatchObject({ status: 'completed' });
    await call('exports-list', { limit: 1 });
    await call('exports-create', { object_type: 'contacts', filters: { tags: 'vip' } });
    await call('exports-get', { id: randomUUID() });
    // --- end exports ---
    // --- erasures (contract §18) ---
    const person = (await call('contacts-create', { first_name: 'Forget', email: 'forget.me@example.com' })).body.result!;
    const created = await call('erasures-create', { contact_id: person.id, suppress_email: true });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const erasure = created.body.result!;
    expect((await call('erasures-get', { id: erasure.id })).body.result).toMatchObject({ contact_id: person.id });
    await call('erasures-list', { limit: 1 });
    await call('erasures-create', { contact_id: randomUUID() });
    await call('erasures-get', { id: 'not-a-uuid' });
    // --- end erasures ---
    const { address } = (await call('inbound-emails-address', {})).body.result as unknown as { address: string };
    const [mail] = await processInboundMessage(Buffer.from(`From: a@b.example\r\nTo: ${address}\r\nSubject: Doc\r\n\r\nx\r\n`), [address]);
    await call('inbound-emails-list', {});
    await call('inbound-emails-get', { id: mail!.emailId });
    await call('inbound-emails-delete', { id: mail!.emailId });
    for (const [family, id] of [['contacts', contact.id], ['companies', company.id], ['sources', source.id], ['custom-fields', field.id]] as const) {
      await call(`${family}-delete`, { id });
    }
    // Each status of each operation compiles a validator over every component schema: slow on a loaded machine.
  }, 120_000);

  it('batches of every family, with item successes and failures', async () => {
    const bodies = { contacts: { first_name: 'B', email: 'b@doc.example' }, companies: { name: 'B', domain: 'b.example' }, sources: { name: 'B' }, projects: { name: 'B' }, activities: { type: 'note' } };
    for (const [family, body] of Object.entries(bodies)) {
      const created = (await call(`${family}-batch-create`, { items: [body, {}] })).body.result as unknown as { results: { record?: { id: string } }[] };
      const id = created.results[0]!.record!.id;
      await call(`${family}-batch-update`, { items: [{ id }, { id: randomUUID() }, { id }] });
      await call(`${family}-batch-get`, { ids: [id, randomUUID()] });
      if (family === 'contacts' || family === 'companies') await call(`${family}-batch-upsert`, { items: [body, {}] });
      await call(`${family}-batch-delete`, { ids: [id, 'nope'] });
    }
    expect((await call('contacts-batch-create', { items: [] })).status).toBe(400);
    expect((await call('contacts-batch-get', { ids: ['nope'] })).status).toBe(400);
    const key = randomUUID();
    await call('companies-batch-upsert', { items: [{ domain: 'k.example' }] }, { headers: { 'idempotency-key': key } });
    expect((await call('companies-batch-upsert', { items: [{ domain: 'other.example' }] }, { headers: { 'idempotency-key': key } })).status).toBe(409);
  }, 120_000);

  // --- trash, restore and merge (contract §15) ---
  it('trash, restore and merge of every family that has them', async () => {
    const bodies = { contacts: { first_name: 'T' }, companies: { name: 'T' }, projects: { name: 'T' }, activities: { type: 'note' } };
    for (const [family, body] of Object.entries(bodies)) {
      const r = (await call(`${family}-create`, body)).body.result!;
      await call(`${family}-delete`, { id: r.id });
      await call('trash-list', { family, limit: 1 });
      await call(`${family}-restore`, { id: r.id });
      expect((await call(`${family}-restore`, { id: r.id })).status).toBe(404);
    }
    for (const [family, body] of Object.entries({ contacts: bodies.contacts, companies: bodies.companies })) {
      const a = (await call(`${family}-create`, body)).body.result!;
      const b = (await call(`${family}-create`, body)).body.result!;
      expect((await call(`${family}-merge`, { primary_id: a.id, secondary_id: a.id })).status).toBe(400);
      expect((await call(`${family}-merge`, { primary_id: a.id, secondary_id: randomUUID() })).status).toBe(404);
      expect((await call(`${family}-merge`, { primary_id: a.id, secondary_id: b.id })).status).toBe(200);
    }
    await call('trash-list', {});
    expect((await call('trash-list', { family: 'sources' })).status).toBe(400);
  });
  // --- end trash ---

  it('successes of the api-keys operations', async () => {
    const created = (await call('api-keys-create', { name: 'Doc key', scopes: ['contacts:read'], expires_at: '2099-01-01T00:00:00.000Z' })).body.result as unknown as { api_key: { id: string } };
    await call('api-keys-list', { limit: 1 });
    await call('api-keys-get', { id: created.api_key.id });
    await call('api-keys-revoke', { id: created.api_key.id });
  });

  it('errors, with their documented codes and statuses', async () => {
    const errors: [string, unknown, number][] = [
      ['contacts-get', { id: randomUUID() }, 404],
      ['contacts-get', { id: 'nope' }, 400],
      ['contacts-get', {}, 400],
      ['contacts-create', {}, 400],
      ['contacts-create', { first_name: 'X', company_id: randomUUID() }, 400],
      ['contacts-create', { first_name: 'X', custom_fields: { [randomUUID()]: 1 } }, 400],
      ['contacts-create', { first_name: 'X', id: randomUUID() }, 400],
      ['contacts-list', { cursor: 'garbage' }, 400],
      ['companies-create', { name: '  ' }, 400],
      ['companies-update', { id: randomUUID(), name: 'x' }, 404],
      ['sources-delete', { id: randomUUID() }, 404],
      ['custom-fields-create', { entity_type: 'deal', name: 'x', field_type: 'text' }, 400],
      ['webhooks-create', { events: ['contact.created'] }, 400],
      ['webhooks-create', { url: 'ftp://x', events: ['contact.created'] }, 400],
      ['webhooks-create', { url: 'https://example.com/h', events: [] }, 400],
      ['webhooks-create', { url: 'https://example.com/h', events: ['nope'] }, 400],
      ['webhooks-deliveries', { endpoint_id: randomUUID() }, 404],
      ['events-list', { cursor: 'garbage' }, 400],
      ['events-list', { types: ['nope'] }, 400],
      ['webhooks-replay', { endpoint_id: randomUUID(), since: new Date().toISOString() }, 404],
    ];
    for (const [op, body, status] of errors) expect((await call(op, body)).status, `${op} ${JSON.stringify(body)}`).toBe(status);
    expect((await call('contacts-list', {}, { token: 'wrong' })).status).toBe(401);
    expect((await call('api-keys-create', { name: 'x', scopes: ['nope'] })).status).toBe(400);
    expect((await call('api-keys-get', { id: randomUUID() })).status).toBe(404);
    // A key of its own account: the rate limit below touches no other test's bucket.
    const readOnly = await issueToken(newAccount(), { scopes: ['*:read'] });
    expect((await call('contacts-create', { first_name: 'x' }, { token: readOnly })).status).toBe(403);
    // Over the account's rate limit: 429 api.rate_limited in the envelope.
    process.env.CRM_RATE_LIMIT = '0.1,1';
    try {
      expect((await call('contacts-list', {}, { token: readOnly })).status).toBe(200);
      expect((await call('contacts-list', {}, { token: readOnly })).status).toBe(429);
    } finally {
      process.env.CRM_RATE_LIMIT = '0';
    }
    expect((await call('contacts-create', {}, { rawBody: '[1]' })).status).toBe(400);
    expect((await call('contacts-create', {}, { rawBody: `{"notes":"${'x'.repeat(300 * 1024)}"}` })).status).toBe(413);
    const key = randomUUID();
    await call('sources-create', { name: 'k' }, { headers: { 'idempotency-key': key } });
    expect((await call('sources-create', { name: 'other' }, { headers: { 'idempotency-key': key } })).status).toBe(409);
  });

  it('pipelines and a project\'s stage history (contract §19)', async () => {
    const stages = [{ name: 'Lead' }, { name: 'Proposal', probability: 40, rot_days: 14 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
    const p = (await call('pipelines-create', { name: 'Sales', stages })).body.result!;
    const q = (await call('pipelines-create', { name: 'Other', stages, is_default: true })).body.result!;
    await call('pipelines-get', { id: p.id });
    await call('pipelines-list', {});
    await call('pipelines-update', { id: p.id, name: 'Sales 2', expected_version: 2 });
    const project = (await call('projects-create', { name: 'Deal', pipeline_id: p.id })).body.result!;
    await call('projects-stage-history', { project_id: project.id, limit: 1 });
    await call('pipelines-board', { pipeline_id: p.id, limit: 2 });
    await call('projects-summary', { group_by: 'stage', pipeline_id: p.id });
    for (const [op, body, status] of [
      ['pipelines-create', { name: 'x', stages: stages.slice(0, 2) }, 400],
      ['pipelines-update', { id: p.id, name: 'y', expected_version: 1 }, 409],
      ['pipelines-delete', { id: p.id }, 409],
      ['pipelines-get', { id: randomUUID() }, 404],
      ['projects-create', { name: 'x', pipeline_id: randomUUID() }, 400],
      ['projects-stage-history', { project_id: randomUUID() }, 404],
      ['projects-summary', { group_by: 'stage' }, 400],
    ] as const) expect((await call(op, body)).status, `${op} ${JSON.stringify(body)}`).toBe(status);
    await call('projects-delete', { id: project.id });
    await call('pipelines-update', { id: p.id, is_default: true });
    await call('pipelines-delete', { id: q.id });
  });

  it('members (contract §20)', async () => {
    const a = (await call('members-create', { email: 'doc.member@example.com', name: 'Doc Member' })).body.result!;
    const b = (await call('members-create', { email: 'other.member@example.com', name: 'Other Member' })).body.result!;
    await call('members-get', { id: a.id });
    await call('members-update', { id: a.id, name: 'Doc Member 2' });
    await call('members-list', { limit: 1 });
    await call('members-deactivate', { id: b.id });
    await call('members-list', { status: 'deactivated' });
    await call('members-reactivate', { id: b.id });
    // the summaries by owner (contract §21)
    await call('contacts-create', { first_name: 'Owned', owner_id: a.id });
    await call('contacts-summary', { group_by: 'owner' });
    await call('contacts-summary', { group_by: 'source' });
    await call('companies-summary', { group_by: 'owner' });
    await call('activities-summary', { group_by: 'assignee', completed: false });
    await call('activities-summary', { group_by: 'type' });
    await call('projects-summary', { group_by: 'owner' });
    await call('projects-summary', { group_by: 'status', owner_id: a.id });
    // reassignments (contract §20)
    const job = (await call('reassignments-create', { from_owner_id: a.id, to_owner_id: b.id, types: ['contacts'] })).body.result!;
    await call('reassignments-get', { id: job.id });
    await call('reassignments-list', { limit: 1 });
    for (const [op, body, status] of [
      ['reassignments-create', { from_owner_id: a.id, to_owner_id: a.id }, 400],
      ['reassignments-get', { id: randomUUID() }, 404],
      ['projects-summary', { group_by: 'status', owner_id: randomUUID() }, 400],
      ['contacts-summary', { group_by: 'type' }, 400],
      ['activities-summary', { group_by: 'type', completed: 1 }, 400],
      ['members-create', { email: 'DOC.MEMBER@example.com', name: 'x' }, 409],
      ['members-create', { email: 'nope', name: 'x' }, 400],
      ['members-update', { id: b.id, email: 'doc.member@EXAMPLE.com' }, 409],
      ['members-get', { id: randomUUID() }, 404],
      ['members-get', { id: 'x' }, 400],
      ['members-list', { cursor: 'x' }, 400],
      ['members-deactivate', { id: a.id, reassign_to: a.id }, 400],
      ['members-reactivate', { id: randomUUID() }, 404],
    ] as const) expect((await call(op, body)).status, `${op} ${JSON.stringify(body)}`).toBe(status);
    // A leaver's records handed on: the member answers, the job is queued.
    expect((await call('members-deactivate', { id: a.id, reassign_to: b.id })).status).toBe(200);
  });

  it('covered every operation of the document', () => {
    const ops = new Set(seen.filter((s) => s.status === 200).map((s) => s.op));
    expect(operations.map((o) => o.name).filter((name) => !ops.has(name))).toEqual([]);
  });
});

describe('documentation routes of the local server', () => {
  let docs: Server;
  let base: string;
  beforeAll(async () => {
    docs = createApiServer(docsRoutes());
    await new Promise<void>((r) => docs.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => {
      docs.closeAllConnections();
      docs.close(() => r());
    });
  });

  it('serves a valid /openapi.json naming this server', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { servers: { url: string }[] };
    expect(doc.servers[0]!.url).toBe(base);
    expect((await new Validator().validate(doc)).valid).toBe(true);
  });

  it('serves /docs with its assets from node_modules (no CDN)', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.every((a) => a.startsWith('/'))).toBe(true);
    for (const asset of assets) expect((await fetch(`${base}${asset}`)).status, asset).toBe(200);
    const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await fetch(`${base}/docs/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${base}/docs/assets/..%2fpackage.json`)).status).toBe(404);
  });
});
