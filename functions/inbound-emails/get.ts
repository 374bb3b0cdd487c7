import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';
import { getInboundEmail } from '../../shared/domain/inbound-emails.js';

export const handler = operation({
  name: 'inbound-emails-get',
  family: 'inbound_emails',
  parse: (body) => parseIdOnly('inbound_emails', body),
  run: ({ id }, ctx) => getInboundEmail(ctx, id),
});
