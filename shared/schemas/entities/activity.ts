import { f } from '../fields.js';
import { defineEntity, type Violation } from './define.js';

export const ACTIVITY_TYPES = ['note', 'task', 'call', 'meeting', 'email'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** Fields that belong to some types only; on other types they read as their empty value. */
export const TYPE_FIELDS: Record<string, readonly ActivityType[]> = {
  due_at: ['task'],
  completed: ['task'],
  direction: ['call', 'email'],
  duration_seconds: ['call', 'meeting'],
};

export const activityEntity = defineEntity({
  type: 'activity',
  family: 'activities',
  label: 'activity',
  description: 'A dated entry on the timeline of contacts, a company or a project: a note, task, call, meeting or email.',
  fields: {
    type: f.oneOf({ description: 'note, task, call, meeting or email (required on create, then read-only)', example: 'call' }, ACTIVITY_TYPES, 'note'),
    subject: f.text({ description: 'Subject, at most 500 characters', example: 'Discovery call' }),
    body: f.text({ description: 'Body, at most 65,536 characters', example: 'Discussed the rollout plan.' }, 65_536),
    occurred_at: f.dateTimeDefaulted({ description: 'When it happened (ISO 8601); defaults to created_at', example: '2026-11-22T09:30:00.000Z' }),
    due_at: f.dateTime({ description: 'Tasks only: null or when it is due', example: null }),
    completed: f.bool({ description: 'Tasks only: whether it is done (default false)', example: false }),
    completed_at: f.computed.dateTime({ description: 'Read-only: when completed turned true; null while not completed', example: null }),
    direction: f.optionalOneOf({ description: 'Calls and emails only: "", inbound or outbound', example: 'outbound' }, ['inbound', 'outbound']),
    duration_seconds: f.intRange({ description: 'Calls and meetings only: null or 0–86,400 seconds', example: 900 }, 0, 86_400),
    contact_ids: f.refs({ description: 'Contacts of the account it concerns (at most 100, distinct)', example: ['3e4d5c6b-7a8f-4e9d-8c7b-6a5f4e3d2c1b'] }, 'contact'),
    company_id: f.ref({ description: 'Company it concerns (a company of the account), or null', example: null }, 'company'),
    project_id: f.ref({ description: 'Project it concerns (a project of the account), or null', example: null }, 'project'),
    assignee_id: f.ref({ description: 'Assignee: an active member of the account (see members-list), or null. A member deactivated later stays the assignee', example: '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c' }, 'member', 'assignee_name'),
    assignee_name: f.computed.text({ description: 'Read-only: the current name of the assignee ("" when unassigned)', example: 'Grace Hopper' }),
    inbound_email_id: f.computed.id({ description: 'Read-only: the inbound email it was logged from, else null', example: null }),
  },
  required: 'type',
  createOnly: ['type'],
  sorted: ['type', 'occurred_at', 'assignee_id', 'updated_at'],
  filters: {
    types: { kind: 'values', field: 'type' },
    contact_id: { kind: 'ref', field: 'contact_ids' },
    company_id: { kind: 'ref', field: 'company_id' },
    project_id: { kind: 'ref', field: 'project_id' },
    completed: { kind: 'bool', field: 'completed' },
    assignee_id: { kind: 'ref', field: 'assignee_id', none: true },
  },
  events: true,
  trash: true,
  rules: (next, sent) => {
    const out: Violation[] = [];
    for (const key of sent) {
      const types = TYPE_FIELDS[key];
      if (types && !types.includes(next.type as ActivityType)) {
        out.push({ code: 'invalid_request', path: key, message: `${key} does not belong to a ${String(next.type)} activity (only ${types.join(', ')})` });
      }
    }
    return out;
  },
  derive: (next, prev, now) => {
    const out: Record<string, unknown> = {};
    if (!prev && !next.occurred_at) out.occurred_at = now;
    if (next.completed === true && !(prev?.completed === true && prev.completed_at)) out.completed_at = now;
    if (next.completed !== true) out.completed_at = null;
    return out;
  },
  docs: {
    list: "List activities, newest first (filters: types (any of), contact_id (a contact's timeline), company_id, project_id, completed, assignee_id (a member id or \"none\"); cursor pagination)",
    create: 'Log an activity (type-specific fields: due_at and completed for tasks, direction for calls and emails, duration_seconds for calls and meetings)',
  },
});
