import { getInboundEmail } from '../../shared/domain/inbound-emails.js';
import { handle } from '../../shared/http/resource.js';
import { inboundEmailsResource } from '../../shared/schemas/resources/inbound-emails.js';

export const handler = handle(inboundEmailsResource, 'get', ({ id }, ctx) => getInboundEmail(ctx, id));
