import { deleteInboundEmail } from '../../shared/domain/inbound-emails.js';
import { handle } from '../../shared/http/resource.js';
import { inboundEmailsResource } from '../../shared/schemas/resources/inbound-emails.js';

export const handler = handle(inboundEmailsResource, 'delete', ({ id }, ctx) => deleteInboundEmail(ctx, id));
