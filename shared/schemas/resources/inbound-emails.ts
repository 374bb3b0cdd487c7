/** Inbound emails (contract §11): the family's operations, declared once (see ../resource.ts). */
import * as v from 'valibot';
import { idOnlyInput } from '../common.js';
import { inboundAddressInput, inboundAddressResult, inboundEmailPage, inboundEmailSchema, inboundListInput } from '../inbound-emails.js';
import { BY_ID, defineResource } from '../resource.js';
import { INBOUND_EMAIL_KEYS } from '../keys/inbound-emails.js';

const FLOW =
  "Mail sent or copied (To, Cc or Bcc) to the account's address is parsed and stored; the addresses of From, To and Cc (other than the inbound address) are compared without case to contacts' emails, and when any matches one `email` activity is logged on them (`inbound_email_id` set, `direction` inbound when the sender is a contact, else outbound). The same Message-ID is stored once per account. Locally: SMTP on 127.0.0.1:SMTP_PORT (default 2525); deployed: Amazon SES receiving for CRM_INBOUND_DOMAIN (docs/inbound-email.md).";
/** Its own object: the document names it `InboundEmailDeleted` (components are matched by identity). */
const deletedSchema = v.object({ deleted: v.pipe(v.literal(true), v.metadata({ description: 'Always true on success' })) });
const DOMAIN = { inboundDomain: 'read' } as const;

export const inboundEmailsResource = defineResource({
  family: 'inbound_emails',
  prefix: 'inbound-emails',
  keys: INBOUND_EMAIL_KEYS,
  components: {
    InboundEmail: inboundEmailSchema,
    InboundEmailPage: inboundEmailPage,
    InboundEmailListInput: inboundListInput,
    InboundAddress: inboundAddressResult,
    InboundAddressInput: inboundAddressInput,
    InboundEmailDeleted: deletedSchema,
  },
  operations: {
    address: { access: 'read', items: { writes: ['inboundAddress'] }, bindings: DOMAIN, summary: "The account's inbound email address (created on first use, then stable)", description: FLOW, input: inboundAddressInput, result: inboundAddressResult },
    list: {
      access: 'read',
      bindings: DOMAIN,
      summary: 'List inbound emails, newest first (filter: contact_id; cursor pagination)',
      description: FLOW,
      input: inboundListInput,
      result: inboundEmailPage,
      errors: ['inbound_emails.invalid_cursor'],
    },
    get: { access: 'read', bindings: DOMAIN, summary: 'Get an inbound email', input: idOnlyInput, result: inboundEmailSchema, body: BY_ID },
    delete: { access: 'write', bindings: DOMAIN, summary: 'Delete an inbound email (the activity logged from it stays)', input: idOnlyInput, result: deletedSchema, body: BY_ID },
  },
});
