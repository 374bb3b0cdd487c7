import { listEvents } from '../../shared/domain/events.js';
import { handle } from '../../shared/http/resource.js';
import { eventsResource } from '../../shared/schemas/resources/events.js';

export const handler = handle(eventsResource, 'list', (input, ctx) => listEvents(ctx, input));
