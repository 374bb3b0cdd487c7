import { inboundAddress } from '../../shared/domain/inbound-emails.js';
import { handle } from '../../shared/http/resource.js';
import { inboundEmailsResource } from '../../shared/schemas/resources/inbound-emails.js';

export const handler = handle(inboundEmailsResource, 'address', (_input, ctx) => inboundAddress(ctx));
