import { getContact } from '../../shared/domain/contacts.js';
import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';

export const handler = operation({
  name: 'contacts-get',
  family: 'contacts',
  parse: (body) => parseIdOnly('contacts', body),
  run: ({ id }, ctx) => getContact(ctx, id),
});
