import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { listEndpoints } from '../../shared/webhooks/endpoints.js';

export const handler = handle(webhooksResource, 'list', (_input, ctx) => listEndpoints(ctx));
