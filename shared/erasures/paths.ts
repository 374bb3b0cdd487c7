/**
 * How the erasure reaches every item kind that holds a person's data (the `personal` flags of
 * the key declarations, shared/schemas/keys/). Typecheck fails when a kind declared personal has
 * no entry here; test/unit/erasure-paths.test.ts fails when an entry names no step of the worker
 * that reaches it.
 */
import type { PersonalKind } from '../schemas/keys/index.js';

export const ERASURE_PATHS: { readonly [K in PersonalKind]: string } = {
  record: 'records: deleted by the record store (its delete, never to the trash)',
  indexEntry: 'records: deleted with the record; search entries by the stream from the deletion',
  sortedEntry: 'records: deleted with the record (its sort-ordered entries, custom fields indexed included)',
  trash: 'records: the trash item deleted in the same transaction, or alone when the contact was in the trash',
  upsertClaim: 'records: the upsert claim of its email (a digest) released with the record',
  merge: 'events: the merge item of each contact.merged in its history (and its own, as a secondary) deleted once its re-pointing is done',
  idempotency: 'idempotent_answers: answers indexed by record id; the stored answer replaced, a replay answers contacts.not_found',
  eventEntry: "events: the contact's history partition (evr#<id>): each entry's three copies redacted",
  webhookDelivery: 'deliveries: the deliveries index by contact (whr#<id>): each stored body redacted',
  inboundEmail: 'inbound_emails: the emails matched to the contact (iec#<id>) or sent from or to one of its addresses (iea#<keyed hash>) deleted with their raw messages in the inbound bucket and the activities logged from them (each marked erased first, its history and deliveries redacted)',
  inboundEmailText: 'inbound_emails: deleted with their email',
  inboundEmailByAddress: "inbound_emails: the emails sent from or to an address the contact had (iea#<keyed hash>, current and earlier ones from its history) deleted as above, and the entries with them",
  importError: "imports: the account's contacts imports' row errors holding one of its values redacted; their files holding its email deleted",
};
