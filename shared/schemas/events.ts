/**
 * The change log (contract §12): the event, who made it (`actor`), and the bodies of
 * `events-list` and `webhooks-replay`, as valibot schemas (the OpenAPI document and the typed
 * client derive from them: shared/schemas/resources/events.ts).
 */
import * as v from 'valibot';
import { ApiError } from '../errors.js';
import { cursorString, limitInteger, parseWith, rejectUnknownFields, requireId } from './common.js';
import { EVENT_NAMES } from './entities/event-names.js';

const datetime = v.pipe(v.string(), v.isoTimestamp());
const uuidIn = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase());

/** Event names of the log: every event of the entity list (the names webhooks subscribe to). */
export const LOG_EVENTS = EVENT_NAMES;
export type LogEvent = (typeof LOG_EVENTS)[number];

// --- actor ------------------------------------------------------------------------------------

export const ACTOR_TYPES = ['api_key', 'import', 'inbound_email', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who made a change: an API key (a dev or CLI token is a key too), an import, an inbound email, or the system (cascades). */
export interface Actor {
  type: ActorType;
  id: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

export const actorSchema = v.pipe(
  v.object({
    type: v.picklist(ACTOR_TYPES),
    id: v.pipe(v.nullable(v.string()), v.metadata({ description: 'The key, import or inbound email id; null for `system`' })),
  }),
  v.metadata({ description: 'Who made the change: `api_key` (the key, or dev token, of the call), `import`, `inbound_email`, or `system` (cascades such as a company deletion unlinking its contacts)' }),
);

/** Reads an actor stored on a record item (anything else is the system). */
export function storedActor(value: unknown): Actor {
  const a = value as Partial<Actor> | undefined;
  if (a && typeof a === 'object' && (ACTOR_TYPES as readonly string[]).includes(String(a.type))) return { type: a.type as ActorType, id: typeof a.id === 'string' ? a.id : null };
  return SYSTEM_ACTOR;
}

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

/** At most this many names in `types` (every event name fits). */
export const MAX_TYPES = 50;

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

// --- webhooks-replay ----------------------------------------------------------------------------

export const webhookReplayInput = v.strictObject({
  endpoint_id: uuidIn,
  since: v.pipe(datetime, v.metadata({ description: 'Events whose timestamp is at or after this time' })),
  until: v.optional(v.pipe(datetime, v.metadata({ description: 'Events whose timestamp is before this time (default: now)' }))),
  types: v.optional(v.pipe(v.array(v.picklist(LOG_EVENTS, 'is not a known event name')), v.maxLength(MAX_TYPES, `must have at most ${MAX_TYPES} names`), v.metadata({ description: 'Only these event names (and only those the endpoint subscribes to)' }))),
});
export type WebhookReplayInput = v.InferOutput<typeof webhookReplayInput>;
export const webhookReplayResult = v.object({ queued: v.pipe(v.number(), v.integer(), v.metadata({ description: 'New deliveries queued' })) });

/**
 * The body of an endpoint's time-window operation (webhooks-recover, webhooks-replay): unknown
 * fields, then `endpoint_id`, then `since` (required), then the schema; `since` and `until`
 * normalised to ISO instants, `until` after `since`.
 */
export function parseEndpointWindow<S extends v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>>(
  schema: S,
  body: Record<string, unknown>,
): { endpoint_id: string; since: string; until?: string; input: v.InferOutput<S> } {
  rejectUnknownFields('webhooks', body, { allowed: Object.keys(schema.entries) });
  const endpointId = requireId('webhooks', body, 'endpoint_id');
  if (body.since === undefined) throw new ApiError('webhooks.invalid_request', 'since is required', [{ path: 'since', message: 'is required' }]);
  const input = parseWith('webhooks', schema, body) as v.InferOutput<S> & { since: string; until?: string };
  const since = new Date(input.since).toISOString();
  const until = input.until === undefined ? undefined : new Date(input.until).toISOString();
  if (until !== undefined && until <= since) throw new ApiError('webhooks.invalid_request', 'until must be after since', [{ path: 'until', message: 'must be after since' }]);
  return { endpoint_id: endpointId, since, ...(until ? { until } : {}), input };
}

/** `since`/`until` come back normalised to `toISOString()` form. */
export function parseWebhookReplay(body: Record<string, unknown>): WebhookReplayInput {
  const { input, ...window } = parseEndpointWindow(webhookReplayInput, body);
  return { ...window, ...(input.types ? { types: [...new Set(input.types)] } : {}) };
}
