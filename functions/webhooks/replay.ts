import { operation } from '../../shared/http/operation.js';
import { parseWebhookReplay } from '../../shared/schemas/events.js';
import { replayEvents } from '../../shared/webhooks/replay.js';

export const handler = operation({ name: 'webhooks-replay', family: 'webhooks', parse: parseWebhookReplay, run: (input, ctx) => replayEvents(ctx, input) });
