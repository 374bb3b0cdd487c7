import { operation } from '../../shared/http/operation.js';
import { parseWebhookResend } from '../../shared/schemas/webhooks.js';
import { resendDelivery } from '../../shared/webhooks/deliveries.js';

export const handler = operation({
  name: 'webhooks-resend',
  family: 'webhooks',
  parse: parseWebhookResend,
  run: (input, ctx) => resendDelivery(ctx, input),
});
