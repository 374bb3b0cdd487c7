import { updateContact, contactBody } from '../../shared/domain/contacts.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'contacts-update',
  family: 'contacts',
  parse: (body) => parseRecordBody(contactBody, body, 'update'),
  run: (input, ctx) => updateContact(ctx, input),
});
