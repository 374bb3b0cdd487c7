import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { replayEvents } from '../../shared/webhooks/replay.js';

export const handler = handle(webhooksResource, 'replay', (input, ctx) => replayEvents(ctx, input));
