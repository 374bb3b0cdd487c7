import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { rotateSecret } from '../../shared/webhooks/endpoints.js';

export const handler = handle(webhooksResource, 'rotate-secret', (input, ctx) => rotateSecret(ctx, input));
