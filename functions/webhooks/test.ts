import { operation } from '../../shared/http/operation.js';
import { parseWebhookTest } from '../../shared/schemas/webhooks.js';
import { sendTestDelivery } from '../../shared/webhooks/deliveries.js';

export const handler = operation({
  name: 'webhooks-test',
  family: 'webhooks',
  parse: parseWebhookTest,
  run: ({ id }, ctx) => sendTestDelivery(ctx, id),
});
