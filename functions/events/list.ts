import { listEvents } from '../../shared/domain/events.js';
import { operation } from '../../shared/http/operation.js';
import { parseEventsList } from '../../shared/schemas/events.js';

export const handler = operation({ name: 'events-list', family: 'events', parse: parseEventsList, run: (input, ctx) => listEvents(ctx, input) });
