import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { listDeliveries } from '../../shared/webhooks/deliveries.js';

export const handler = handle(webhooksResource, 'deliveries', (input, ctx) => listDeliveries(ctx, input));
