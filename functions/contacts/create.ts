import { createContact, contactBody } from '../../shared/domain/contacts.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'contacts-create',
  family: 'contacts',
  wrap: idempotentCreate(),
  parse: (body) => parseRecordBody(contactBody, body, 'create'),
  run: (input, ctx) => createContact(ctx, input),
});
