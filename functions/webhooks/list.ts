import { operation } from '../../shared/http/operation.js';
import { parseWebhookList } from '../../shared/schemas/webhooks.js';
import { listEndpoints } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-list',
  family: 'webhooks',
  parse: parseWebhookList,
  run: (_input, ctx) => listEndpoints(ctx),
});
