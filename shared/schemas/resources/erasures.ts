/** Erasure of a person (contract §18): the family's operations, declared once (see ../resource.ts). */
import { erasureCreateInput, erasureIdInput, erasureListInput, erasureListResult, erasureSchema } from '../erasures.js';
import { BY_ID, defineResource } from '../resource.js';
import { ERASURE_KEYS } from '../keys/erasures.js';

export const erasuresResource = defineResource({
  family: 'erasures',
  prefix: 'erasures',
  keys: ERASURE_KEYS,
  components: {
    Erasure: erasureSchema,
    ErasureList: erasureListResult,
    ErasureCreateInput: erasureCreateInput,
    ErasureIdInput: erasureIdInput,
    ErasureListInput: erasureListInput,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      bindings: { erasuresQueue: 'send' },
      summary: 'Erase a contact (live or in the trash) and every copy of its data; cannot be undone',
      description:
        'Starts the erasure (status `pending`); within 60 seconds in local mode it is `completed`. The contact, its trash item, search and filter entries are deleted; activities linked to no other record are deleted, others lose the contact from `contact_ids` (projects likewise, with `*.updated` events); matched inbound emails are deleted with the activities logged from them; the change log and webhook deliveries keep `id`, `event`, `timestamp`, `record_id` and `actor` with `data: { id }`; export files of contacts are deleted (`status` `expired`); import rows holding its email are redacted and its files deleted; stored idempotent answers holding it answer `contacts.not_found`. ' +
        'A `contact.erased` event (data `{ id }`) follows. Erasing the same contact again returns the first erasure. `suppress_email: true` keeps a keyed hash of the email: a later create, update, batch or import row with it is refused (`contacts.email_suppressed`).',
      input: erasureCreateInput,
      result: erasureSchema,
      body: { ids: ['contact_id'] },
      errors: ['erasures.not_found', 'erasures.invalid_id'],
    },
    get: {
      access: 'read',
      summary: 'Get an erasure: status and what was removed',
      input: erasureIdInput,
      result: erasureSchema,
      body: BY_ID,
    },
    list: {
      access: 'read',
      summary: 'List erasures, newest first (cursor pagination)',
      input: erasureListInput,
      result: erasureListResult,
    },
  },
});
