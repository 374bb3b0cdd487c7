import { operation } from '../../shared/http/operation.js';
import { parseWebhookUpdate } from '../../shared/schemas/webhooks.js';
import { updateEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-update',
  family: 'webhooks',
  parse: parseWebhookUpdate,
  run: (input, ctx) => updateEndpoint(ctx, input),
});
