import * as v from 'valibot';
import { f, placed } from '../fields.js';
import { defineEntity, type Violation } from './define.js';

export const PROJECT_STATUSES = ['open', 'completed', 'canceled'] as const;

export const projectEntity = defineEntity({
  type: 'project',
  family: 'projects',
  label: 'project',
  description: 'A piece of work or a deal with a company and its people.',
  fields: {
    name: f.name({ description: 'Project name (required on create, 1–200 characters)', example: 'Difference Engine No. 2' }),
    description: f.text({ description: 'Free text, at most 10,000 characters', example: 'Build and deliver the engine.' }, 10_000),
    status: f.oneOf({ description: 'open (default), completed or canceled; any transition is allowed', example: 'open' }, PROJECT_STATUSES, 'open'),
    stage: f.text({ description: 'Outside a pipeline: free text of at most 100 characters. In a pipeline: read-only, the name of its stage', example: 'proposal' }, 100),
    amount: f.count({ description: 'Value in cents (null, or an integer ≥ 0)', example: 1500000 }),
    currency: f.currency({ description: '"" or an ISO 4217 code (three upper-case letters)', example: 'GBP' }),
    company_id: f.ref({ description: 'Company of the project (a company of the account), or null', example: '9b2f8a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b' }, 'company', 'company_name'),
    company_name: f.computed.text({ description: 'Read-only: the current name of the company', example: 'Analytical Engines Ltd' }),
    contact_ids: f.refs({ description: 'Contacts of the account on the project (at most 100, distinct)', example: ['3e4d5c6b-7a8f-4e9d-8c7b-6a5f4e3d2c1b'] }, 'contact'),
    start_date: f.date({ description: '"" or YYYY-MM-DD', example: '2026-12-01' }),
    due_date: f.date({ description: '"" or YYYY-MM-DD, not before start_date', example: '2027-03-31' }),
    pipeline_id: placed.id({ description: 'null, or a pipeline of the account (alone: its first open stage); null leaves the pipeline', example: '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f' }),
    stage_id: placed.id({ description: 'null, or a stage of pipeline_id (alone: its pipeline); status and stage follow the stage', example: '5d0c7a8e-2b1f-4c3d-9e8f-7a6b5c4d3e2f' }),
    stage_entered_at: f.computed.dateTime({ description: 'Read-only: when it entered its current stage; null outside a pipeline', example: '2026-11-22T01:16:30.123Z' }),
    probability: placed.number({ description: 'Read-only: its stage\'s probability (0–100); null outside a pipeline', example: 40 }),
    rotting_since: f.computed.dateTime({ description: 'Read-only: stage_entered_at + the stage\'s rot_days, for an open stage with rot_days; else null', example: null }),
    stage_times: placed.map(
      { description: 'Read-only: for every stage it has been in, its visits, the time spent there (the current visit not counted), when it first entered it and last left it', example: {} },
      v.object({ visits: v.pipe(v.number(), v.integer()), total_ms: v.pipe(v.number(), v.integer()), first_entered_at: v.pipe(v.string(), v.isoTimestamp()), last_exited_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())) }),
    ),
    closed_at: f.computed.dateTime({ description: 'Read-only: when status left open; null while open', example: null }),
    owner_id: f.ref({ description: 'Owner: an active member of the account (see members-list), or null. A member deactivated later stays the owner', example: '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c' }, 'member', 'owner_name'),
    owner_name: f.computed.text({ description: 'Read-only: the current name of the owner ("" when unowned)', example: 'Grace Hopper' }),
    tags: f.tags({ description: 'Tags: at most 50, each 1–64 characters; duplicates dropped; case-sensitive', example: ['q1'] }),
    custom_fields: f.customFields({
      description: 'Custom field values keyed by custom-field definition id (entity_type project), not by name; null removes a key on update',
      example: { '7c9e6679-7425-40de-944b-e07fc1f90ae7': 'High' },
    }),
  },
  required: 'name',
  search: (r) => ({ text: [String(r.name ?? '')] }),
  sorted: ['name', 'status', 'due_date', 'amount', 'pipeline_id', 'stage_id', 'owner_id', 'updated_at'],
  pipeline: (sent, current) =>
    ['pipeline_id', 'stage_id'].some((k) => k in sent) || (typeof current?.pipeline_id === 'string' && ['status', 'stage'].some((k) => k in sent))
      ? 'this operation cannot place a project in a pipeline: use projects-create or projects-update'
      : undefined,
  filters: {
    status: { kind: 'values', field: 'status' },
    company_id: { kind: 'ref', field: 'company_id' },
    contact_id: { kind: 'ref', field: 'contact_ids' },
    tags: { kind: 'tags', field: 'tags' },
    owner_id: { kind: 'ref', field: 'owner_id', none: true },
  },
  events: true,
  trash: true,
  rules: (next) => {
    const out: Violation[] = [];
    const start = String(next.start_date ?? '');
    const due = String(next.due_date ?? '');
    if (start && due && due < start) out.push({ code: 'invalid_request', path: 'due_date', message: 'due_date must not be before start_date' });
    return out;
  },
  derive: (next, prev, now) => {
    const wasOpen = prev ? prev.status === 'open' : true;
    if (next.status === 'open') return { closed_at: null };
    return wasOpen || !prev?.closed_at ? { closed_at: now } : {};
  },
  docs: {
    list: 'List projects, newest first (filters: status (any of), company_id, contact_id, tags (all), owner_id (a member id or "none"), search by name words; cursor pagination)',
    delete: 'Delete a project (its activities lose their link to it)',
  },
});
