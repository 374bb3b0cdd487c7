import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { deleteEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = handle(webhooksResource, 'delete', ({ id }, ctx) => deleteEndpoint(ctx, id));
