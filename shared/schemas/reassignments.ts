/**
 * Reassignments (contract §20): the bodies of reassignments-create, -get and -list and the job's
 * API shape, as valibot schemas (they also generate the OpenAPI document), and the parse of
 * reassignments-create.
 */
import * as v from 'valibot';
import { cursorString, limitInteger, parseWith, rejectUnknownFields } from './common.js';

/** The record families whose owner a reassignment hands on (contacts, companies, projects: `owner_id`; activities: `assignee_id`). */
export const REASSIGNMENT_TYPES = ['contacts', 'companies', 'projects', 'activities'] as const;
export type ReassignmentType = (typeof REASSIGNMENT_TYPES)[number];
export const REASSIGNMENT_STATUSES = ['queued', 'running', 'completed'] as const;
type ReassignmentStatus = (typeof REASSIGNMENT_STATUSES)[number];

const d = <S extends v.GenericSchema>(schema: S, description: string, example?: unknown) =>
  v.pipe(schema, v.metadata({ description, ...(example !== undefined ? { examples: [example] } : {}) }));
const uuid = v.pipe(v.string('must be a UUID'), v.uuid('must be a UUID'), v.toLowerCase());
const MEMBER_ID_EXAMPLE = '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c';
const timestamp = (description: string) => d(v.pipe(v.string(), v.isoTimestamp()), description, '2026-11-28T10:15:30.123Z');
const count = (description: string) => d(v.pipe(v.number(), v.integer(), v.minValue(0)), description, 0);

const doc = {
  from: 'The member whose records are handed on: a member of the account, active or deactivated',
  to: 'The member who takes them over (an active member of the account), or null to leave them unowned',
  types: 'The record families to hand on (default all four): contacts, companies and projects change `owner_id`, activities `assignee_id`',
};

// --- inputs -------------------------------------------------------------------------------------

export const reassignmentCreateInput = v.strictObject({
  from_owner_id: d(uuid, doc.from, MEMBER_ID_EXAMPLE),
  to_owner_id: d(v.nullable(v.pipe(v.string('must be a member id or null'), v.uuid('must be a UUID or null'), v.toLowerCase())), doc.to, null),
  types: v.optional(
    d(
      v.pipe(
        v.array(v.picklist(REASSIGNMENT_TYPES, 'must be contacts, companies, projects or activities'), 'must be an array of record families'),
        v.minLength(1, 'must name at least one family'),
      ),
      doc.types,
      ['contacts', 'companies'],
    ),
  ),
});
/** The body as the job takes it: `types` in the families' order, each once, every family when absent. */
export type ReassignmentCreate = { from_owner_id: string; to_owner_id: string | null; types: ReassignmentType[] };

export const reassignmentIdInput = v.strictObject({ id: d(uuid, 'Id of the reassignment', '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f') });
export const reassignmentListInput = v.strictObject({
  cursor: v.optional(d(cursorString, 'The `next_cursor` of the previous page (opaque)')),
  limit: v.optional(d(limitInteger, 'Reassignments per page, 1–100 (default 25)', 25), 25),
});
export type ReassignmentListInput = v.InferOutput<typeof reassignmentListInput>;

// --- output -------------------------------------------------------------------------------------

export const reassignmentSchema = v.object({
  id: d(v.pipe(v.string(), v.uuid()), 'Id of the reassignment (the `actor.id` of the `*.updated` events it raises, actor type `reassignment`)'),
  status: d(v.picklist(REASSIGNMENT_STATUSES), 'queued → running → completed', 'completed'),
  from_owner_id: d(v.pipe(v.string(), v.uuid()), doc.from, MEMBER_ID_EXAMPLE),
  to_owner_id: d(v.nullable(v.pipe(v.string(), v.uuid())), doc.to, null),
  types: d(v.array(v.picklist(REASSIGNMENT_TYPES)), 'The record families handed on', [...REASSIGNMENT_TYPES]),
  processed: count('Records of `from_owner_id` looked at so far (saved after each page)'),
  changed: count('Records whose owner the job changed so far; a record whose owner changed meanwhile is looked at but kept'),
  created_at: timestamp('When the reassignment was asked for (ISO 8601 UTC)'),
  completed_at: d(v.nullable(v.pipe(v.string(), v.isoTimestamp())), 'When it completed; null until then', null),
});
export type Reassignment = v.InferOutput<typeof reassignmentSchema>;

export const reassignmentListResult = v.object({
  items: v.array(reassignmentSchema),
  next_cursor: d(v.string(), 'Pass as `cursor` for the next page; "" on the last page', ''),
});

// --- parse --------------------------------------------------------------------------------------

/** `types` in the families' order, each once; every family when absent. */
export const canonicalTypes = (types: readonly ReassignmentType[] | undefined): ReassignmentType[] => (types ? REASSIGNMENT_TYPES.filter((t) => types.includes(t)) : [...REASSIGNMENT_TYPES]);

export function parseReassignmentCreate(body: Record<string, unknown>): ReassignmentCreate {
  rejectUnknownFields('reassignments', body, { allowed: Object.keys(reassignmentCreateInput.entries), readOnly: ['id', 'status', 'processed', 'changed', 'created_at', 'completed_at'] });
  const input = parseWith('reassignments', reassignmentCreateInput, body);
  return { from_owner_id: input.from_owner_id, to_owner_id: input.to_owner_id, types: canonicalTypes(input.types) };
}
