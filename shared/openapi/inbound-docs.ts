/**
 * The API description of the inbound-email operations (contract §11; see operations.ts for the
 * shape of an entry).
 */
import * as v from 'valibot';
import { idOnlyInput } from '../schemas/common.js';
import { inboundAddressInput, inboundAddressResult, inboundEmailPage, inboundEmailSchema, inboundListInput } from '../schemas/inbound-emails.js';
import type { OperationDoc } from './doc-types.js';

const deletedSchema = v.object({ deleted: v.pipe(v.literal(true), v.metadata({ description: 'Always true on success' })) });

/** Named component schemas of the inbound-email operations. */
export const inboundComponentSchemas: Record<string, v.GenericSchema> = {
  InboundEmail: inboundEmailSchema,
  InboundEmailPage: inboundEmailPage,
  InboundEmailListInput: inboundListInput,
  InboundAddress: inboundAddressResult,
  InboundAddressInput: inboundAddressInput,
  InboundEmailDeleted: deletedSchema,
};

const FLOW =
  'Mail sent or copied (To, Cc or Bcc) to the account\'s address is parsed and stored; the addresses of From, To and Cc (other than the inbound address) are compared without case to contacts\' emails, and when any matches one `email` activity is logged on them (`inbound_email_id` set, `direction` inbound when the sender is a contact, else outbound). The same Message-ID is stored once per account. Locally: SMTP on 127.0.0.1:SMTP_PORT (default 2525); deployed: Amazon SES receiving for CRM_INBOUND_DOMAIN (docs/inbound-email.md).';

export const inboundOperationDocs = {
  'inbound-emails-address': { summary: "The account's inbound email address (created on first use, then stable)", description: FLOW, input: inboundAddressInput, result: inboundAddressResult },
  'inbound-emails-list': {
    summary: 'List inbound emails, newest first (filter: contact_id; cursor pagination)',
    description: FLOW,
    input: inboundListInput,
    result: inboundEmailPage,
    errors: ['inbound_emails.invalid_cursor'],
  },
  'inbound-emails-get': { summary: 'Get an inbound email', input: idOnlyInput, result: inboundEmailSchema },
  'inbound-emails-delete': { summary: 'Delete an inbound email (the activity logged from it stays)', input: idOnlyInput, result: deletedSchema },
} satisfies Record<string, OperationDoc>;
