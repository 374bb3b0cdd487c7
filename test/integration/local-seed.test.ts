/**
 * `npm run seed`: a realistic sample account through the API of a running local server, and a
 * second run that duplicates nothing.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamo.js';
import { startServer, type TestServer } from '../helpers/api.js';

const REPO = join(import.meta.dirname, '..', '..');
process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true'; // as under npm start
let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

const count = async (op: string, body: Record<string, unknown> = {}) => {
  const r = await s.call<{ items?: unknown[]; endpoints?: unknown[] }>(op, { ...body, ...(op === 'webhooks-list' ? {} : { limit: 100 }) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.result!.items ?? r.body.result!.endpoints)!.length;
};

describe('npm run seed', () => {
  it('fills an account with companies, contacts, projects, a timeline and a webhook endpoint, once', { timeout: 60_000 }, async () => {
    const receiver = `http://127.0.0.1:${await freePort()}/hook`; // nothing listens: deliveries just wait
    const seed = () => promisify(execFile)(join(REPO, 'node_modules', '.bin', 'tsx'), ['scripts/seed.ts', '--url', s.baseUrl, '--token', s.token, '--receiver', receiver], { cwd: REPO });
    const first = await seed();
    expect(first.stdout).toMatch(/3 lead sources, 4 companies \(4 created\), 20 contacts \(20 created\)/);
    expect(first.stdout).toMatch(/10 projects in the "Sales" pipeline \(Lead, Qualified, Proposal, Won, Lost\), 30 activities/);
    expect(first.stdout).toMatch(/WEBHOOK_SECRET=whsec_\S+ npm run receiver/);
    expect(first.stdout).toMatch(/4 members \(.+\), owners of the companies, contacts and deals/);
    const figures = { companies: await count('companies-list'), contacts: await count('contacts-list'), sources: await count('sources-list'), projects: await count('projects-list'), activities: await count('activities-list'), endpoints: await count('webhooks-list') };
    expect(figures).toEqual({ companies: 4, contacts: 20, sources: 3, projects: 10, activities: 30, endpoints: 1 });
    // The pipeline: every project in one of its stages, amounts in two currencies.
    const sales = (await s.call<{ items: Array<{ id: string; name: string; stages: Array<{ id: string; name: string }> }> }>('pipelines-list', {})).body.result!.items.find((p) => p.name === 'Sales')!;
    expect(sales.stages.map((x) => x.name)).toEqual(['Lead', 'Qualified', 'Proposal', 'Won', 'Lost']);
    const perStage = await Promise.all(sales.stages.map((x) => count('projects-list', { filter: { field: 'stage_id', op: 'eq', value: x.id } })));
    expect(perStage).toEqual([2, 2, 2, 2, 2]);
    const currencies = (await s.call<{ items: Array<{ currency: string }> }>('projects-list', { limit: 100 })).body.result!.items.map((x) => x.currency);
    expect(new Set(currencies)).toEqual(new Set(['USD', 'EUR', '']));
    // Members own every company, contact and deal, each member something; tasks have assignees.
    const members = (await s.call<{ items: Array<{ id: string; name: string }> }>('members-list', { limit: 100 })).body.result!.items;
    expect(members).toHaveLength(4);
    for (const family of ['companies', 'contacts', 'projects']) expect(await count(`${family}-list`, { owner_id: 'none' }), family).toBe(0);
    const owned = await Promise.all(members.map((m) => count('contacts-list', { owner_id: m.id })));
    expect(owned.every((n) => n > 0) && owned.reduce((a, b) => a + b) === 20).toBe(true);
    const deal = (await s.call<{ items: Array<{ owner_id: string; owner_name: string }> }>('projects-list', { limit: 1 })).body.result!.items[0]!;
    expect(deal.owner_name).toBe(members.find((m) => m.id === deal.owner_id)!.name);
    expect(await count('activities-list', { filter: { field: 'assignee_id', op: 'eq', value: members[0]!.id } })).toBeGreaterThan(0);
    // A contact's timeline has entries.
    const ada = (await s.call<{ items: Array<{ id: string }> }>('contacts-list', { search: 'ada.lovelace@acme-robotics.example' })).body.result!.items[0]!;
    expect(await count('activities-list', { contact_id: ada.id })).toBeGreaterThanOrEqual(2);
    // The four examples of docs/api.md, "Filtering and sorting", return something.
    const plan = (await s.call<{ items: Array<{ id: string; name: string }> }>('custom-fields-list', { entity_type: 'contact' })).body.result!.items.find((d) => d.name === 'Plan')!;
    const since = new Date(Date.now() - 86_400_000).toISOString();
    expect(await count('companies-list', { filter: { and: [{ field: 'employee_count', op: 'gt', value: 50 }, { field: 'created_at', op: 'gte', value: since }] } })).toBe(3);
    expect(await count('projects-list', { filter: { and: [{ field: 'status', op: 'eq', value: 'open' }, { field: 'amount', op: 'gt', value: 1_000_000 }, { field: 'due_date', op: 'lt', value: '2099-06-01' }] }, sort: { field: 'due_date', direction: 'asc' } })).toBe(2);
    expect(await count('contacts-list', { filter: { field: `custom_fields.${plan.id}`, op: 'eq', value: 'enterprise' }, sort: { field: 'last_name', direction: 'asc' } })).toBe(7);
    expect(await count('activities-list', { filter: { and: [{ field: 'type', op: 'eq', value: 'task' }, { field: 'completed', op: 'eq', value: false }, { field: 'due_at', op: 'lt', value: new Date().toISOString() }] } })).toBe(1);

    const second = await seed();
    expect(second.stdout).toMatch(/already seeded/);
    expect({ companies: await count('companies-list'), contacts: await count('contacts-list'), sources: await count('sources-list'), projects: await count('projects-list'), activities: await count('activities-list'), endpoints: await count('webhooks-list') }).toEqual(figures);
    expect(await count('members-list', { limit: 100 })).toBe(4);
  });

  it('refuses a server that is not on this machine', async () => {
    const run = promisify(execFile)(join(REPO, 'node_modules', '.bin', 'tsx'), ['scripts/seed.ts', '--url', 'http://example.com', '--token', 'x'], { cwd: REPO });
    await expect(run).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/must be a local server/) });
  });
});
