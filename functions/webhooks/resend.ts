import { handle } from '../../shared/http/resource.js';
import { webhooksResource } from '../../shared/schemas/resources/webhooks.js';
import { resendDelivery } from '../../shared/webhooks/deliveries.js';

export const handler = handle(webhooksResource, 'resend', (input, ctx) => resendDelivery(ctx, input));
