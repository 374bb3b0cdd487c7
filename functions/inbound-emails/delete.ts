import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';
import { deleteInboundEmail } from '../../shared/domain/inbound-emails.js';

export const handler = operation({
  name: 'inbound-emails-delete',
  family: 'inbound_emails',
  parse: (body) => parseIdOnly('inbound_emails', body),
  run: ({ id }, ctx) => deleteInboundEmail(ctx, id),
});
