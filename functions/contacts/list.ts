import { listContacts } from '../../shared/domain/contacts.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { contactListInput } from '../../shared/schemas/records.js';

export const handler = operation({
  name: 'contacts-list',
  family: 'contacts',
  parse: (body) => parseWith('contacts', contactListInput, body),
  run: (input, ctx) => listContacts(ctx, input),
});
