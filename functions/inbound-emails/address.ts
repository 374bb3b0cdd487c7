import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { inboundAddress } from '../../shared/domain/inbound-emails.js';
import { inboundAddressInput } from '../../shared/schemas/inbound-emails.js';

export const handler = operation({
  name: 'inbound-emails-address',
  family: 'inbound_emails',
  parse: (body) => parseWith('inbound_emails', inboundAddressInput, body),
  run: (_input, ctx) => inboundAddress(ctx),
});
