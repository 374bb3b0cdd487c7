import { operation } from '../../shared/http/operation.js';
import { parseWebhookDeliveries } from '../../shared/schemas/webhooks.js';
import { listDeliveries } from '../../shared/webhooks/deliveries.js';

export const handler = operation({
  name: 'webhooks-deliveries',
  family: 'webhooks',
  parse: parseWebhookDeliveries,
  run: (input, ctx) => listDeliveries(ctx, input),
});
