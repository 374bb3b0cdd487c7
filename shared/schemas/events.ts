/**
 * The change log (contract §12): who made a change (`actor`), the log's event names and the body
 * of `webhooks-replay`, as valibot schemas (the OpenAPI document and the typed client derive
 * from them). The event and the bodies of `events-list` are in ./events-list.ts, so that the
 * webhooks' functions, which read the actor, do not bundle them.
 */
import * as v from 'valibot';
import { ApiError } from '../errors.js';
import { parseWith, rejectUnknownFields, requireId } from './common.js';
import { EVENT_NAMES } from './entities/event-names.js';

export const datetime = v.pipe(v.string(), v.isoTimestamp());
export const uuidIn = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase());

/** At most this many names in `types` (every event name fits). */
export const MAX_TYPES = 50;

/** Event names of the log: every event of the entity list (the names webhooks subscribe to). */
export const LOG_EVENTS = EVENT_NAMES;
export type LogEvent = (typeof LOG_EVENTS)[number];

// --- actor ------------------------------------------------------------------------------------

export const ACTOR_TYPES = ['api_key', 'import', 'inbound_email', 'reassignment', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who made a change: an API key (a dev or CLI token is a key too), an import, an inbound email, a reassignment (contract §20), or the system (cascades). */
export interface Actor {
  type: ActorType;
  id: string | null;
  /** An API key bound to a member (contract §20): the member's id. */
  member_id?: string;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

export const actorSchema = v.pipe(
  v.object({
    type: v.picklist(ACTOR_TYPES),
    id: v.pipe(v.nullable(v.string()), v.metadata({ description: 'The key, import, inbound email or reassignment id; null for `system`' })),
    member_id: v.optional(v.pipe(v.string(), v.metadata({ description: 'The member an `api_key` acts for (api-keys-create `member_id`); absent for a key bound to none' }))),
  }),
  v.metadata({ description: 'Who made the change: `api_key` (the key, or dev token, of the call), `import`, `inbound_email`, `reassignment` (reassignments-create, members-deactivate with reassign_to), or `system` (cascades such as a company deletion unlinking its contacts)' }),
);

/** Reads an actor stored on a record item (anything else is the system). */
export function storedActor(value: unknown): Actor {
  const a = value as Partial<Actor> | undefined;
  if (a && typeof a === 'object' && (ACTOR_TYPES as readonly string[]).includes(String(a.type))) {
    return { type: a.type as ActorType, id: typeof a.id === 'string' ? a.id : null, ...(typeof a.member_id === 'string' ? { member_id: a.member_id } : {}) };
  }
  return SYSTEM_ACTOR;
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
