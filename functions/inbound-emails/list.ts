import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { listInboundEmails } from '../../shared/domain/inbound-emails.js';
import { inboundListInput } from '../../shared/schemas/inbound-emails.js';

export const handler = operation({
  name: 'inbound-emails-list',
  family: 'inbound_emails',
  parse: (body) => parseWith('inbound_emails', inboundListInput, body),
  run: (input, ctx) => listInboundEmails(ctx, input),
});
