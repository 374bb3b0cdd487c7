/**
 * The API description of the change log's operations (contract §12; see operations.ts for the
 * shape of an entry).
 */
import type * as v from 'valibot';
import { actorSchema, eventSchema, eventsListInput, eventsPage, webhookReplayInput, webhookReplayResult } from '../schemas/events.js';
import type { OperationDoc } from './doc-types.js';

/** Named component schemas of the change log's operations. */
export const eventComponentSchemas: Record<string, v.GenericSchema> = {
  Event: eventSchema,
  Actor: actorSchema,
  EventPage: eventsPage,
  EventListInput: eventsListInput,
  WebhookReplayInput: webhookReplayInput,
  WebhookReplayed: webhookReplayResult,
};

export const eventOperationDocs = {
  'events-list': {
    summary: "Read the account's change log, oldest first (filters: types, record_id; resumable cursor)",
    description:
      'Every committed change of a contact, company, project or activity (cascades included) is one event, the same one its webhooks receive (same `id`), with `previous_attributes` on updates and the `actor`. Without `cursor` the log starts at `since` (or the oldest retained event). `next_cursor` is never empty: store it and ask again later to get only what happened since; `has_more` is true when further events are already available. A consumer following `next_cursor` sees every event committed after its position exactly once (events become readable within seconds of their change). Events are kept `EVENT_RETENTION_DAYS` (default 30); a cursor whose position has been purged is `events.cursor_expired` (410): re-sync from the lists. Filters must stay the same along a cursor.',
    input: eventsListInput,
    result: eventsPage,
    errors: ['events.cursor_expired'],
  },
  'webhooks-replay': {
    summary: "Send an endpoint the log's events of a time range again, as new deliveries",
    description:
      'Every retained event of the account whose `timestamp` is in [`since`, `until`) (`until` defaults to now), whose name the endpoint subscribes to (and within `types`), is sent to the endpoint as a new delivery — including events raised while it was disabled or before it existed. The body is the event as first raised (same `id`), so receivers dedupe by it. Returns `{ queued: n }`. An inactive endpoint is `webhooks.endpoint_inactive`: enable it first.',
    input: webhookReplayInput,
    result: webhookReplayResult,
    errors: ['webhooks.invalid_id', 'webhooks.not_found', 'webhooks.endpoint_inactive'],
  },
} satisfies Record<string, OperationDoc>;
