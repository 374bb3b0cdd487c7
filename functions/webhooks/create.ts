import { operation } from '../../shared/http/operation.js';
import { parseWebhookCreate } from '../../shared/schemas/webhooks.js';
import { createEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-create',
  family: 'webhooks',
  parse: parseWebhookCreate,
  run: (input, ctx) => createEndpoint(ctx, input),
});
