import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { parseWebhookCreate } from '../../shared/schemas/webhooks.js';
import { createEndpoint, sealedCreateResult } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-create',
  family: 'webhooks',
  // A retried create returns the first answer; the stored copy keeps the secret encrypted.
  wrap: idempotentCreate(sealedCreateResult),
  parse: parseWebhookCreate,
  run: (input, ctx) => createEndpoint(ctx, input),
});
