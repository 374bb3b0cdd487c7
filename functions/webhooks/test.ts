import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { sendTestDelivery } from '../../shared/webhooks/deliveries.js';

export const handler = handle(webhooksResource, 'test', ({ id }, ctx) => sendTestDelivery(ctx, id));
