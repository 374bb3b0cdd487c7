import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { getEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = handle(webhooksResource, 'get', ({ id }, ctx) => getEndpoint(ctx, id));
