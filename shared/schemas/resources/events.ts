/** The change log (contract §12): the family's operations, declared once (see ../resource.ts). `webhooks-replay` is the webhooks family's. */
import { actorSchema } from '../events.js';
import { eventSchema, eventsListInput, eventsPage, parseEventsList } from '../events-list.js';
import { defineResource } from '../resource.js';
import { EVENT_KEYS } from '../keys/events.js';

export const eventsResource = defineResource({
  family: 'events',
  prefix: 'events',
  keys: EVENT_KEYS,
  components: { Event: eventSchema, Actor: actorSchema, EventPage: eventsPage, EventListInput: eventsListInput },
  operations: {
    list: {
      access: 'read',
      items: { reads: ['changeLog'] },
      summary: "Read the account's change log, oldest first (filters: types, record_id; resumable cursor)",
      description:
        'Every committed change of a contact, company, project or activity (cascades included) is one event, the same one its webhooks receive (same `id`), with `previous_attributes` on updates and the `actor`. Without `cursor` the log starts at `since` (or the oldest retained event). `next_cursor` is never empty: store it and ask again later to get only what happened since; `has_more` is true when further events are already available. A consumer following `next_cursor` sees every event committed after its position exactly once (events become readable within seconds of their change). Events are kept `EVENT_RETENTION_DAYS` (default 30); a cursor whose position has been purged is `events.cursor_expired` (410): re-sync from the lists. Filters must stay the same along a cursor.',
      input: eventsListInput,
      result: eventsPage,
      errors: ['events.cursor_expired'],
      parse: parseEventsList,
    },
  },
});
