import { handle } from '../../shared/http/idempotent-resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { createEndpoint, sealedCreateResult } from '../../shared/webhooks/endpoints.js';

// Idempotent by its declaration: a retried create returns the first answer, whose stored copy keeps the secret encrypted.
export const handler = handle(webhooksResource, 'create', (input, ctx) => createEndpoint(ctx, input), { seal: sealedCreateResult });
