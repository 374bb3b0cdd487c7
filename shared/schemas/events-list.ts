/**
 * The change log's event and the bodies of `events-list` (contract §12), as valibot schemas (the
 * OpenAPI document and the typed client derive from them: ./resources/events.ts). Who made a
 * change (`actor`) and the log's event names are ./events.ts's.
 */
import * as v from 'valibot';
import { cursorString, limitInteger, parseWith, rejectUnknownFields } from './common.js';
import { actorSchema, datetime, LOG_EVENTS, type LogEvent, MAX_TYPES, uuidIn } from './events.js';

// --- the event --------------------------------------------------------------------------------

export const eventSchema = v.object({
  id: v.pipe(v.string(), v.metadata({ description: 'The event id: the same `id` the webhook body of this change carries (receivers dedupe by it)' })),
  event: v.picklist(LOG_EVENTS),
  timestamp: v.pipe(datetime, v.metadata({ description: 'When the change happened (the record\'s `updated_at`; for `*.deleted` the deletion time)' })),
  record_id: v.pipe(v.string(), v.metadata({ description: 'The id of the record that changed' })),
  data: v.pipe(v.record(v.string(), v.unknown()), v.metadata({ description: 'The record as the API returned it after the change; for `*.deleted` as it was just before' })),
  previous_attributes: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.metadata({ description: '`*.updated` only: the fields that changed, with their values before' }))),
  merged_id: v.optional(v.pipe(v.string(), v.metadata({ description: '`*.merged` only: the id of the record merged into `data` (now in the trash)' }))),
  actor: actorSchema,
});
export type LogEntryEvent = v.InferOutput<typeof eventSchema>;

// --- events-list --------------------------------------------------------------------------------

export const eventsListInput = v.strictObject({
  cursor: v.optional(v.pipe(cursorString, v.metadata({ description: 'The `next_cursor` of an earlier answer: the log continues right after it (filters must be the same; `since` is then ignored)' }))),
  since: v.optional(v.pipe(datetime, v.metadata({ description: 'Without `cursor`: start at the first event logged at or after this time (before the retention window: the oldest retained event)' }))),
  types: v.optional(v.pipe(v.array(v.picklist(LOG_EVENTS, 'is not a known event name')), v.maxLength(MAX_TYPES, `must have at most ${MAX_TYPES} names`), v.metadata({ description: 'Only these event names (any of); empty: every event' }))),
  record_id: v.optional(v.pipe(uuidIn, v.metadata({ description: 'Only the history of this record' }))),
  limit: v.optional(v.pipe(limitInteger, v.metadata({ description: 'Events per page, 1–100 (default 25)', examples: [25] }))),
});
export type EventsListInput = v.InferOutput<typeof eventsListInput>;

export const eventsPage = v.object({
  items: v.pipe(v.array(eventSchema), v.metadata({ description: 'Events, oldest first' })),
  next_cursor: v.pipe(v.string(), v.metadata({ description: 'Never empty: the position after the last item returned (or where the request started when none was). Store it and ask again later for what happened since' })),
  has_more: v.pipe(v.boolean(), v.metadata({ description: 'True when further events are already available' })),
});
export type EventsPage = v.InferOutput<typeof eventsPage>;

export function parseEventsList(body: Record<string, unknown>): EventsListInput {
  rejectUnknownFields('events', body, { allowed: Object.keys(eventsListInput.entries) });
  const input = parseWith('events', eventsListInput, body);
  return { ...input, ...(input.since ? { since: new Date(input.since).toISOString() } : {}), ...(input.types ? { types: [...new Set(input.types)].sort() as LogEvent[] } : {}) };
}
