/**
 * `npm run seed`: a realistic sample account in a running local server, through its API.
 *
 *   npm run seed [-- --url http://127.0.0.1:3000] [--token crm_…] [--receiver http://127.0.0.1:4000/hook]
 *
 * Without --url/--token (or CRM_URL/CRM_TOKEN) it uses the running `npm start` (its state file,
 * local/state-file.ts) and its printed dev token. It adds: 3 lead sources, 4 companies, 20
 * contacts (with companies, sources, tags, phones), 4 members who own the companies, contacts and
 * deals and are assigned the tasks, a "Sales" pipeline (Lead, Qualified, Proposal,
 * Won, Lost) with 10 projects spread over its stages (amounts in USD and EUR), a timeline of 30 activities
 * (notes, calls, meetings, tasks, emails over the last 30 days) and a webhook endpoint to the
 * local receiver (`npm run receiver`, default http://127.0.0.1:4000/hook; loopback only), whose
 * signing secret it prints with the command that starts the receiver.
 *
 * Run it again and nothing is duplicated: sources, members and the endpoint are looked up first,
 * companies and contacts are upserted (by domain, by email), and projects and activities are
 * added only with the companies' first creation.
 */
import { parseArgs } from 'node:util';
import { readLocalState, stateFilePath } from '../local/state-file.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.CRM_URL },
    token: { type: 'string', default: process.env.CRM_TOKEN },
    receiver: { type: 'string', default: 'http://127.0.0.1:4000/hook' },
  },
});

function fail(message: string): never {
  console.error(message);
  console.error('usage: npm run seed [-- --url http://127.0.0.1:3000] [--token crm_…] [--receiver http://127.0.0.1:4000/hook]');
  process.exit(2);
}

const local = values.url && values.token ? undefined : readLocalState();
const baseUrl = (values.url ?? local?.baseUrl)?.replace(/\/+$/, '');
const token = values.token ?? local?.tokens[0]?.token;
if (!baseUrl || !token) fail(`no running npm start found (${stateFilePath()}): start it, or pass --url and --token`);
const loopback = (raw: string) => {
  try {
    const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
};
// A sample account belongs on this machine: the tool talks to loopback addresses only.
if (!loopback(baseUrl)) fail(`--url must be a local server (localhost, 127.0.0.1, [::1]); got ${baseUrl}`);
if (!loopback(values.receiver)) fail(`--receiver must be a URL on this machine; got ${values.receiver}`);

interface Envelope<T> {
  ok: boolean;
  result?: T;
  error?: { code: string; message: string };
}

async function call<T>(op: string, body: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as Envelope<T>;
  if (!answer.ok) throw new Error(`${op}: ${res.status} ${answer.error?.code}: ${answer.error?.message}`);
  return answer.result as T;
}

interface BatchResult {
  results: Array<{ index: number; ok: boolean; action?: string; record?: { id: string }; error?: { code: string; message: string } }>;
}

/** Batch results in input order; any failed item stops the seed with its error. */
async function batch(op: string, items: unknown[]): Promise<Array<{ id: string; action: string }>> {
  const { results } = await call<BatchResult>(op, { items });
  const failed = results.find((r) => !r.ok);
  if (failed) throw new Error(`${op} item ${failed.index}: ${failed.error?.code}: ${failed.error?.message}`);
  return results.map((r) => ({ id: r.record!.id, action: r.action! }));
}

const DAY = 86_400_000;
const daysAgo = (n: number, hour = 10) => new Date(Math.floor(Date.now() / DAY) * DAY - n * DAY + hour * 3_600_000).toISOString();

// ---- the sample account ------------------------------------------------------------------
const SOURCES = ['Website', 'Referral', 'Conference'];
const COMPANIES = [
  { name: 'Acme Robotics', domain: 'acme-robotics.example', industry: 'Manufacturing', employee_count: 420, tags: ['customer', 'enterprise'] },
  { name: 'Globex Analytics', domain: 'globex.example', industry: 'Software', employee_count: 85, tags: ['prospect'] },
  { name: 'Initech Health', domain: 'initech-health.example', industry: 'Healthcare', employee_count: 1200, tags: ['customer'] },
  { name: 'Umbra Studio', domain: 'umbra.example', industry: 'Design', employee_count: 12, tags: ['partner'] },
];
const PEOPLE: Array<[first: string, last: string, title: string, company: number, source: number, tags: string[]]> = [
  ['Ada', 'Lovelace', 'Head of Research', 0, 1, ['vip', 'decision-maker']],
  ['Charles', 'Babbage', 'CTO', 0, 2, ['decision-maker']],
  ['Grace', 'Hopper', 'VP Engineering', 0, 0, ['champion']],
  ['Alan', 'Turing', 'Principal Engineer', 0, 2, []],
  ['Katherine', 'Johnson', 'Data Lead', 1, 0, ['champion']],
  ['Dorothy', 'Vaughan', 'CEO', 1, 1, ['decision-maker', 'vip']],
  ['Mary', 'Jackson', 'Product Manager', 1, 0, []],
  ['Edsger', 'Dijkstra', 'Architect', 1, 2, ['technical']],
  ['Barbara', 'Liskov', 'CIO', 2, 1, ['decision-maker']],
  ['Donald', 'Knuth', 'Head of IT', 2, 2, ['technical']],
  ['Frances', 'Allen', 'Procurement Lead', 2, 0, []],
  ['John', 'Backus', 'Operations Manager', 2, 0, []],
  ['Margaret', 'Hamilton', 'Security Officer', 2, 2, ['technical', 'vip']],
  ['Radia', 'Perlman', 'Network Lead', 2, 1, []],
  ['Hedy', 'Lamarr', 'Creative Director', 3, 1, ['partner-contact']],
  ['Tim', 'Berners-Lee', 'Founder', 3, 2, ['decision-maker']],
  ['Annie', 'Easley', 'Account Manager', 3, 0, []],
  ['Ken', 'Thompson', 'Engineer', 3, 0, []],
  ['Jean', 'Sammet', 'Consultant', -1, 1, ['freelance']],
  ['Linus', 'Torvalds', 'Maintainer', -1, 0, ['open-source']],
];
const MEMBERS: Array<[name: string, email: string]> = [
  ['Sam Carter', 'sam.carter@crm.example'],
  ['Priya Nair', 'priya.nair@crm.example'],
  ['Tomás Ruiz', 'tomas.ruiz@crm.example'],
  ['Mei Chen', 'mei.chen@crm.example'],
];
const EVENTS = ['contact.created', 'contact.updated', 'contact.deleted', 'company.created', 'company.updated', 'company.deleted'];

// 1. The webhook endpoint first, so the receiver gets the seeded records' events.
const endpoints = await call<{ endpoints?: Array<{ id: string; url: string }>; items?: Array<{ id: string; url: string }> }>('webhooks-list', {});
const existing = (endpoints.endpoints ?? endpoints.items ?? []).find((e) => e.url === values.receiver);
let secretLine = `webhook endpoint ${existing?.id} → ${values.receiver} (already there; its secret was shown when it was created, or use webhooks-rotate-secret)`;
if (!existing) {
  const created = await call<{ endpoint: { id: string }; signing_secret: string }>('webhooks-create', { url: values.receiver, events: EVENTS, description: 'npm run seed: the local receiver' });
  secretLine = `webhook endpoint ${created.endpoint.id} → ${values.receiver}; start the receiver with:\n  WEBHOOK_SECRET=${created.signing_secret} npm run receiver   (deliveries made before it listens are retried)`;
}

// 2. Members (looked up by email), lead sources (by name), companies (by domain), contacts (by email).
const knownMembers = (await call<{ items: Array<{ id: string; email: string }> }>('members-list', { limit: 100 })).items;
const memberIds: string[] = [];
for (const [name, email] of MEMBERS) memberIds.push(knownMembers.find((m) => m.email.toLowerCase() === email)?.id ?? (await call<{ id: string }>('members-create', { name, email })).id);
/** The owner of the i-th record of a kind: the members take turns. */
const ownerOf = (i: number) => memberIds[i % memberIds.length]!;
const knownSources = (await call<{ items: Array<{ id: string; name: string }> }>('sources-list', { limit: 100 })).items;
const sourceIds: string[] = [];
for (const name of SOURCES) sourceIds.push(knownSources.find((s) => s.name === name)?.id ?? (await call<{ id: string }>('sources-create', { name })).id);
const companies = await batch('companies-batch-upsert', COMPANIES.map((c, i) => ({ ...c, owner_id: ownerOf(i) })));
// A custom "Plan" field (select), for filtering and sorting examples (docs/api.md, "Filtering and sorting").
const plans = (await call<{ items: Array<{ id: string; name: string }> }>('custom-fields-list', { entity_type: 'contact' })).items;
const planId = plans.find((d) => d.name === 'Plan')?.id ?? (await call<{ id: string }>('custom-fields-create', { entity_type: 'contact', name: 'Plan', field_type: 'select', options: ['free', 'pro', 'enterprise'] })).id;
const firstRun = companies[0]!.action === 'created';
const contacts = await batch(
  'contacts-batch-upsert',
  PEOPLE.map(([first, last, title, company, source, tags], i) => ({
    first_name: first,
    last_name: last,
    email: `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '') + `@${company >= 0 ? COMPANIES[company]!.domain : 'mail.example'}`,
    phone: `+1 (555) 01${String(i).padStart(2, '0')}-${String(1000 + i * 37).slice(-4)}`,
    job_title: title,
    company_id: company >= 0 ? companies[company]!.id : null,
    source_id: sourceIds[source]!,
    // A contact is owned by its company's owner; the two without a company by the first member.
    owner_id: ownerOf(Math.max(company, 0)),
    tags,
    custom_fields: { [planId]: ['enterprise', 'pro', 'free'][i % 3] },
  })),
);

// 3. The "Sales" pipeline (looked up first: created once).
const STAGES = [
  { name: 'Lead', probability: 10, rot_days: 30 },
  { name: 'Qualified', probability: 25, rot_days: 21 },
  { name: 'Proposal', probability: 50, rot_days: 14 },
  { name: 'Won', kind: 'won' },
  { name: 'Lost', kind: 'lost' },
];
/** Deals of the pipeline beside the four projects below: name, stage, amount (cents), currency. */
const DEALS: Array<[string, string, number, string]> = [
  ['Hooli: fleet telematics', 'Lead', 350_000, 'EUR'],
  ['Stark: robotics retrofit', 'Lead', 820_000, 'USD'],
  ['Wayne: access control', 'Qualified', 640_000, 'EUR'],
  ['Soylent: supply analytics', 'Proposal', 1_500_000, 'EUR'],
  ['Tyrell: data migration', 'Won', 300_000, 'USD'],
  ['Cyberdyne: pilot', 'Lost', 75_000, 'EUR'],
];
interface Pipeline { id: string; name: string; stages: Array<{ id: string; name: string }> }
async function salesPipeline(): Promise<Pipeline> {
  const { items } = await call<{ items: Pipeline[] }>('pipelines-list', {});
  return items.find((p) => p.name === 'Sales') ?? call<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES });
}

// 4. Projects (in the pipeline's stages) and a timeline, on the first run only.
let projectCount = 0;
let activityCount = 0;
if (firstRun) {
  const projects = await batch('projects-batch-create', [
    { name: 'Acme: warehouse automation pilot', status: 'open', stage: 'proposal', amount: 4_800_000, currency: 'USD', due_date: daysAgo(-120).slice(0, 10), company_id: companies[0]!.id, contact_ids: [contacts[0]!.id, contacts[1]!.id], tags: ['pilot'] },
    { name: 'Globex: analytics platform renewal', status: 'open', stage: 'negotiation', amount: 1_250_000, currency: 'USD', due_date: daysAgo(-60).slice(0, 10), company_id: companies[1]!.id, contact_ids: [contacts[5]!.id], tags: ['renewal'] },
    { name: 'Initech: security review', status: 'completed', stage: 'done', amount: 900_000, currency: 'USD', company_id: companies[2]!.id, contact_ids: [contacts[12]!.id, contacts[8]!.id] },
    { name: 'Umbra: co-marketing campaign', status: 'canceled', stage: 'idea', amount: null, currency: '', company_id: companies[3]!.id, contact_ids: [contacts[14]!.id] },
  ]);
  // More deals, then every project into a stage of the "Sales" pipeline (a batch create does not
  // place projects: projects-batch-update does, as projects-update).
  const deals = await batch('projects-batch-create', DEALS.map(([name, , amount, currency]) => ({ name, amount, currency })));
  const sales = await salesPipeline();
  const stageOf = (name: string) => sales.stages.find((s) => s.name === name)!.id;
  const placed = [...projects.map((p, i) => ({ id: p.id, stage: ['Proposal', 'Qualified', 'Won', 'Lost'][i]! })), ...deals.map((d, i) => ({ id: d.id, stage: DEALS[i]![1] }))];
  await batch('projects-batch-update', placed.map((p, i) => ({ id: p.id, stage_id: stageOf(p.stage), owner_id: ownerOf(i) })));
  projectCount = placed.length;
  const timeline: unknown[] = [];
  PEOPLE.forEach(([first, , , company], i) => {
    if (i >= 15) return;
    const base = { contact_ids: [contacts[i]!.id], ...(company >= 0 ? { company_id: companies[company]!.id } : {}) };
    const kind = i % 5;
    if (kind === 0) timeline.push({ ...base, type: 'note', subject: `Intro with ${first}`, body: 'Interested in a pilot next quarter; send the case studies.', occurred_at: daysAgo(28 - i) });
    if (kind === 1) timeline.push({ ...base, type: 'call', subject: `Discovery call with ${first}`, direction: 'outbound', duration_seconds: 1_500 + i * 60, occurred_at: daysAgo(25 - i, 15) });
    if (kind === 2) timeline.push({ ...base, type: 'meeting', subject: `Demo for ${first}'s team`, duration_seconds: 3_600, occurred_at: daysAgo(20 - i, 11) });
    if (kind === 3) timeline.push({ ...base, type: 'email', subject: `Proposal sent to ${first}`, direction: 'outbound', body: 'Attached: proposal v2 with the revised pricing.', occurred_at: daysAgo(15 - Math.floor(i / 2), 9) });
    if (kind === 4) timeline.push({ ...base, type: 'task', subject: `Follow up with ${first}`, due_at: daysAgo(-3 - i), completed: false, assignee_id: ownerOf(Math.max(company, 0)) });
    // Everyone in the pilot gets a second touch.
    if (i < 6) timeline.push({ ...base, type: 'note', subject: `${first}: pilot scope agreed`, body: 'Two sites, eight weeks, success = 20% fewer picking errors.', occurred_at: daysAgo(5 - i, 16), project_id: projects[0]!.id });
  });
  timeline.push({ type: 'task', subject: 'Send renewal quote to Globex', due_at: daysAgo(-7), completed: false, assignee_id: ownerOf(1), company_id: companies[1]!.id, project_id: projects[1]!.id, contact_ids: [contacts[5]!.id] });
  timeline.push({ type: 'call', subject: 'Renewal check-in', direction: 'inbound', duration_seconds: 900, occurred_at: daysAgo(2, 14), company_id: companies[1]!.id, project_id: projects[1]!.id, contact_ids: [contacts[4]!.id, contacts[5]!.id] });
  timeline.push({ type: 'task', subject: 'Call Umbra back about the campaign', due_at: daysAgo(2), completed: false, company_id: companies[3]!.id, contact_ids: [contacts[14]!.id] });
  timeline.push({ type: 'task', subject: 'Security questionnaire returned', due_at: daysAgo(10), completed: true, company_id: companies[2]!.id, project_id: projects[2]!.id, contact_ids: [contacts[12]!.id] });
  while (timeline.length < 30) timeline.push({ type: 'note', subject: `Weekly account review #${timeline.length}`, body: 'Pipeline reviewed; no blockers.', occurred_at: daysAgo(timeline.length % 28, 8), company_id: companies[timeline.length % 4]!.id });
  activityCount = (await batch('activities-batch-create', timeline)).length;
}

const actions = (xs: Array<{ action: string }>) => Object.entries(xs.reduce<Record<string, number>>((n, x) => ({ ...n, [x.action]: (n[x.action] ?? 0) + 1 }), {})).map(([a, n]) => `${n} ${a}`).join(', ');
console.log(`seeded ${baseUrl}:`);
console.log(`  ${memberIds.length} members (${MEMBERS.map(([name]) => name).join(', ')}), owners of the companies, contacts and deals`);
console.log(`  ${SOURCES.length} lead sources, ${companies.length} companies (${actions(companies)}), ${contacts.length} contacts (${actions(contacts)})`);
console.log(firstRun ? `  ${projectCount} projects in the "Sales" pipeline (${STAGES.map((s) => s.name).join(', ')}), ${activityCount} activities (a timeline over the last 30 days)` : '  projects and activities: already seeded, not added again');
console.log(`  ${secretLine}`);
console.log(`try: curl -s -X POST ${baseUrl}/api/activities-list -H 'Authorization: Bearer …' -d '{"contact_id":"${contacts[0]!.id}"}'`);
