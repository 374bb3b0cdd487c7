import { idempotentCreate } from '../../shared/http/idempotency.js';
import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { createEndpoint, sealedCreateResult } from '../../shared/webhooks/endpoints.js';

// A retried create returns the first answer; the stored copy keeps the secret encrypted.
export const handler = handle(webhooksResource, 'create', (input, ctx) => createEndpoint(ctx, input), { wrap: idempotentCreate(sealedCreateResult) });
