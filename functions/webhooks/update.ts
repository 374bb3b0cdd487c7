import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { updateEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = handle(webhooksResource, 'update', (input, ctx) => updateEndpoint(ctx, input));
