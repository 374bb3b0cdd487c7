import * as v from 'valibot';
import { ApiError } from '../errors.js';
import { allowInsecureWebhooks } from '../config/env.js';
import { parseWebhookUrl } from '../net/ssrf.js';
import { cursorString, limitInteger, plainString } from './common.js';
import { EVENT_NAMES } from './entities/event-names.js';
import { actorSchema, parseEndpointWindow } from './events.js';

/** Event names an endpoint may subscribe to: every event of the entity list (interface "Events"). */
export const WEBHOOK_EVENTS = EVENT_NAMES;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What a delivery can carry: the subscribable events and `webhook.test` (webhooks-test). */
export const DELIVERY_EVENT_TYPES = [...WEBHOOK_EVENTS, 'webhook.test'] as const;
export type DeliveryEventType = (typeof DELIVERY_EVENT_TYPES)[number];

/** Why an endpoint is inactive (`""` while it is active). */
export const DISABLED_REASONS = ['', 'manual', 'failing', 'gone'] as const;

/** webhooks-rotate-secret: the grace period's bounds and default (seconds). */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;
export const DEFAULT_GRACE_PERIOD_SECONDS = 86_400;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const datetime = v.pipe(v.string(), v.isoTimestamp());

// --- inputs ---------------------------------------------------------------------------------
// The schemas describe the bodies (and generate the OpenAPI document); the parse functions
// below run the contract's checks in its order before the schemas check the types.

export const webhookUrl = v.pipe(v.string(), v.maxLength(2048, 'must be at most 2048 characters'));
export const webhookEventList = v.pipe(
  v.array(v.picklist(WEBHOOK_EVENTS, 'is not a known event name')),
  v.minLength(1, 'must not be empty'),
  v.transform((events) => [...new Set(events)]),
);

export const webhookCreateInput = v.strictObject({
  url: webhookUrl,
  description: v.optional(plainString),
  events: webhookEventList,
});
export type WebhookCreateInput = v.InferOutput<typeof webhookCreateInput>;

export const webhookUpdateInput = v.strictObject({
  id: uuid,
  url: v.optional(webhookUrl),
  description: v.optional(plainString),
  events: v.optional(webhookEventList),
  is_active: v.optional(v.boolean()),
});
export type WebhookUpdateInput = v.InferOutput<typeof webhookUpdateInput>;

export const webhookIdInput = v.strictObject({ id: uuid });
export const webhookListInput = v.strictObject({});

export const webhookDeliveriesInput = v.strictObject({
  endpoint_id: uuid,
  limit: v.optional(limitInteger, 25),
  status: v.optional(v.pipe(v.picklist(DELIVERY_STATUSES, 'must be pending, delivered or failed'), v.metadata({ description: 'Only deliveries with this status' }))),
  cursor: v.optional(v.pipe(cursorString, v.metadata({ description: 'next_cursor of the previous page (same endpoint_id and status)' }))),
});
export type WebhookDeliveriesInput = v.InferOutput<typeof webhookDeliveriesInput>;

export const webhookRotateInput = v.strictObject({
  id: uuid,
  grace_period_seconds: v.optional(
    v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be between 0 and 604800'), v.maxValue(MAX_GRACE_PERIOD_SECONDS, 'must be between 0 and 604800')),
    DEFAULT_GRACE_PERIOD_SECONDS,
  ),
});
export type WebhookRotateInput = v.InferOutput<typeof webhookRotateInput>;

export const webhookResendInput = v.strictObject({ endpoint_id: uuid, delivery_id: uuid });
export type WebhookResendInput = v.InferOutput<typeof webhookResendInput>;

export const webhookRecoverInput = v.strictObject({ endpoint_id: uuid, since: datetime, until: v.optional(datetime) });
export type WebhookRecoverInput = v.InferOutput<typeof webhookRecoverInput>;

// --- results --------------------------------------------------------------------------------

export const webhookEndpointSchema = v.object({
  id: uuid,
  account_id: uuid,
  created_by: uuid,
  url: v.string(),
  description: v.string(),
  secret_prefix: v.string(),
  events: v.array(v.picklist(WEBHOOK_EVENTS)),
  is_active: v.boolean(),
  disabled_reason: v.picklist(DISABLED_REASONS),
  failing_since: v.nullable(datetime),
  created_at: datetime,
  updated_at: datetime,
});
export type WebhookEndpoint = v.InferOutput<typeof webhookEndpointSchema>;

export const webhookCreateResult = v.object({ endpoint: webhookEndpointSchema, signing_secret: v.pipe(v.string(), v.startsWith('whsec_')) });
export const webhookListResult = v.object({ items: v.array(webhookEndpointSchema) });
export const webhookDeleteResult = v.object({ deleted: v.literal(true) });

export const webhookDeliverySchema = v.object({
  id: uuid,
  endpoint_id: uuid,
  event_id: v.string(),
  event_type: v.picklist(DELIVERY_EVENT_TYPES),
  status: v.picklist(DELIVERY_STATUSES),
  http_status_code: v.nullable(v.pipe(v.number(), v.integer())),
  attempt_count: v.pipe(v.number(), v.integer()),
  last_error: v.string(),
  next_attempt_at: v.nullable(datetime),
  completed_at: v.nullable(datetime),
  created_at: datetime,
});
export type WebhookDelivery = v.InferOutput<typeof webhookDeliverySchema>;
export const webhookDeliveriesResult = v.object({
  deliveries: v.array(webhookDeliverySchema),
  next_cursor: v.pipe(v.string(), v.metadata({ description: 'Pass as cursor for the next page; "" when there is none' })),
});
export const webhookRotateResult = webhookCreateResult;
export const webhookRecoverResult = v.object({ queued: v.pipe(v.number(), v.integer()) });

/** The body POSTed to an endpoint. */
export const webhookPayloadSchema = v.object({
  id: v.string(),
  event: v.picklist(DELIVERY_EVENT_TYPES),
  timestamp: datetime,
  data: v.record(v.string(), v.unknown()),
  /** Record events (§12): the record's id and who made the change (absent on `webhook.test`). */
  record_id: v.optional(v.string()),
  previous_attributes: v.optional(v.record(v.string(), v.unknown())),
  /** `<type>.merged` (contract §15): the id of the record merged into `data`. */
  merged_id: v.optional(v.string()),
  actor: v.optional(actorSchema),
});
export type WebhookPayload = v.InferOutput<typeof webhookPayloadSchema>;

// --- parsing, in the contract's order ------------------------------------------------------

export const WEBHOOK_READ_ONLY = ['account_id', 'created_by', 'secret_prefix', 'disabled_reason', 'failing_since', 'created_at', 'updated_at'] as const;

const fail = (code: string, message: string, path: string) => new ApiError(`webhooks.${code}`, message, [{ path, message }]);

/** `url`: missing/null/blank → url_required; not a string → invalid_request; not an allowed URL → invalid_url. */
function checkUrl(body: Record<string, unknown>, mode: 'create' | 'update'): void {
  const url = body.url;
  if (url === undefined && mode === 'update') return;
  if (url === undefined || url === null || (typeof url === 'string' && url.trim() === '')) throw fail('url_required', 'url is required', 'url');
  if (typeof url !== 'string') return; // the schema reports the wrong type
  if (!parseWebhookUrl(url, allowInsecureWebhooks())) {
    throw fail('invalid_url', allowInsecureWebhooks() ? 'url must be an https URL, or an http URL to a loopback host' : 'url must be an absolute https URL of at most 2048 characters', 'url');
  }
}

/** `events`: missing/null/empty → events_required; names outside the event table → invalid_events. */
function checkEvents(body: Record<string, unknown>, mode: 'create' | 'update'): void {
  const events = body.events;
  if (events === undefined && mode === 'update') return;
  if (events === undefined || events === null || (Array.isArray(events) && events.length === 0)) throw fail('events_required', 'events must name at least one event', 'events');
  if (!Array.isArray(events) || events.some((e) => typeof e !== 'string')) return; // wrong type: the schema reports it
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length) {
    throw new ApiError(
      'webhooks.invalid_events',
      `unknown event names: ${unknown.join(', ')}`,
      unknown.map((e) => ({ path: `events.${events.indexOf(e)}`, message: `is not a known event name (one of ${WEBHOOK_EVENTS.join(', ')})` })),
    );
  }
}

/** The checks of `url` and `events` with their own codes, in the contract's order (resources/webhooks.ts). */
export const webhookBodyChecks = (mode: 'create' | 'update') => [(body: Record<string, unknown>) => checkUrl(body, mode), (body: Record<string, unknown>) => checkEvents(body, mode)];

/** `since`/`until` come back normalised to `toISOString()` form (they are compared with stored keys). */
export function parseWebhookRecover(body: Record<string, unknown>): WebhookRecoverInput {
  const { input: _input, ...window } = parseEndpointWindow(webhookRecoverInput, body);
  return window;
}
