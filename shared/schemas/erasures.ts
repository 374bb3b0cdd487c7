/**
 * Erasures (contract §18): the operations' bodies and the erasure record as valibot schemas
 * (they also generate the OpenAPI document).
 */
import * as v from 'valibot';
import { cursorString, limitInteger } from './common.js';

export const ERASURE_STATUSES = ['pending', 'completed'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** What `removed` counts, by kind of copy (contract §18). */
export const REMOVED_KINDS = ['records', 'activities', 'inbound_emails', 'events', 'deliveries', 'exports', 'import_rows', 'idempotent_answers'] as const;
export type RemovedKind = (typeof REMOVED_KINDS)[number];
export type Removed = Record<RemovedKind, number>;
export const noneRemoved = (): Removed => Object.fromEntries(REMOVED_KINDS.map((k) => [k, 0])) as Removed;

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const timestamp = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-25T21:30:00.000Z'] }));
const nullableTimestamp = (description: string) => v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.metadata({ description }));
const count = (description: string) => v.pipe(v.number(), v.integer(), v.minValue(0), v.metadata({ description }));

// --- inputs -----------------------------------------------------------------------------------

export const erasureCreateInput = v.strictObject({
  contact_id: v.pipe(uuid, v.metadata({ description: 'The contact to erase (live or in the trash)', examples: ['3e4d5c6b-7a8f-4e9d-8c7b-6a5f4e3d2c1b'] })),
  suppress_email: v.optional(
    v.pipe(v.boolean('must be a boolean'), v.metadata({ description: 'Keep a keyed hash of the email (never the email): a later write of that address is refused (`contacts.email_suppressed`)', examples: [false] })),
    false,
  ),
});
export type ErasureCreateInput = v.InferOutput<typeof erasureCreateInput>;

export const erasureIdInput = v.strictObject({ id: uuid });
export const erasureListInput = v.strictObject({ cursor: v.optional(cursorString), limit: v.optional(limitInteger, 25) });
export type ErasureListInput = v.InferOutput<typeof erasureListInput>;

// --- outputs ----------------------------------------------------------------------------------

export const erasureRemovedSchema = v.pipe(
  v.object(Object.fromEntries(REMOVED_KINDS.map((k) => [k, count(`${k.replace('_', ' ')} deleted or redacted`)])) as Record<RemovedKind, ReturnType<typeof count>>),
  v.metadata({ description: 'What was deleted or redacted, by kind of copy (0 until completed)' }),
);

export const erasureSchema = v.object({
  id: v.pipe(uuid, v.metadata({ description: 'Erasure id' })),
  contact_id: v.pipe(uuid, v.metadata({ description: 'The erased contact' })),
  status: v.pipe(v.picklist(ERASURE_STATUSES), v.metadata({ description: 'pending → completed (within 60 seconds in local mode)' })),
  suppress_email: v.pipe(v.boolean(), v.metadata({ description: "Whether a keyed hash of the contact's email is kept to refuse it later" })),
  removed: erasureRemovedSchema,
  requested_at: timestamp('When the erasure was requested (ISO 8601 UTC)'),
  completed_at: nullableTimestamp('When it completed; null while pending'),
});
export type ErasureRecord = v.InferOutput<typeof erasureSchema>;

export const erasureListResult = v.object({ items: v.array(erasureSchema), next_cursor: v.string() });

// --- redaction (pure) ---------------------------------------------------------------------------

/**
 * The record types whose events an erasure redacts (contract §18): the person (`contact`) and the
 * activities erased with it (their subject and body are about the person: notes, logged mail).
 * Their deliveries are indexed by record (`whr#<id>`), and the stream worker checks whether one is
 * erased before it logs or delivers its change.
 */
export const PERSONAL_RECORD_TYPES = ['contact', 'activity'] as const;
export const isPersonalEvent = (event: string): boolean => PERSONAL_RECORD_TYPES.some((t) => event.startsWith(`${t}.`));

/**
 * An event body as an erasure leaves it (contract §18): `id`, `event`, `timestamp`, `record_id`
 * and `actor` kept, `data` only `{ id }`, `previous_attributes` and `merged_id` dropped.
 */
export function redactPayload(payload: { id: string; event: string; timestamp: string; record_id?: string; actor?: unknown }): { id: string; event: string; timestamp: string; record_id: string; data: { id: string }; actor?: unknown } {
  const recordId = String(payload.record_id ?? '');
  return { id: payload.id, event: payload.event, timestamp: payload.timestamp, record_id: recordId, data: { id: recordId }, ...(payload.actor === undefined ? {} : { actor: payload.actor }) };
}

/** The same, of a body's JSON text (a stored log entry or delivery). */
export const redactEventBody = (body: string): string => JSON.stringify(redactPayload(JSON.parse(body) as Parameters<typeof redactPayload>[0]));
