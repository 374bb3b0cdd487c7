import { operation } from '../../shared/http/operation.js';
import { parseWebhookRecover } from '../../shared/schemas/webhooks.js';
import { recoverDeliveries } from '../../shared/webhooks/deliveries.js';

export const handler = operation({
  name: 'webhooks-recover',
  family: 'webhooks',
  parse: parseWebhookRecover,
  run: (input, ctx) => recoverDeliveries(ctx, input),
});
