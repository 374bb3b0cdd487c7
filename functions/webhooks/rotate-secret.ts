import { operation } from '../../shared/http/operation.js';
import { parseWebhookRotate } from '../../shared/schemas/webhooks.js';
import { rotateSecret } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-rotate-secret',
  family: 'webhooks',
  parse: parseWebhookRotate,
  run: (input, ctx) => rotateSecret(ctx, input),
});
