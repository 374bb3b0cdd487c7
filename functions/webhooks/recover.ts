import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { recoverDeliveries } from '../../shared/webhooks/deliveries.js';

export const handler = handle(webhooksResource, 'recover', (input, ctx) => recoverDeliveries(ctx, input));
