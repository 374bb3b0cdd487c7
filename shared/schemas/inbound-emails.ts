/**
 * Inbound emails (contract §11): the operations' bodies and the record, as valibot schemas (the
 * OpenAPI document and the typed client derive from them; shared/schemas/resources/inbound-emails.ts).
 */
import * as v from 'valibot';
import { cursorString, limitInteger } from './common.js';

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const uuidIn = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase());
const datetime = v.pipe(v.string(), v.isoTimestamp());

export const inboundAddressInput = v.strictObject({});
export const inboundAddressResult = v.object({
  address: v.pipe(v.string(), v.metadata({ description: 'The account\'s inbound address: `<key>@<CRM_INBOUND_DOMAIN>`, a random key of 24 characters, created once and stable', examples: ['k3v9q2m8x4t7w1z5r6y0p2h8@inbound.example.com'] })),
});

export const inboundListInput = v.strictObject({
  contact_id: v.optional(v.pipe(uuidIn, v.metadata({ description: 'Only emails matched to this contact' }))),
  cursor: v.optional(v.pipe(cursorString, v.metadata({ description: 'The `next_cursor` of the previous page (opaque)' }))),
  limit: v.optional(v.pipe(limitInteger, v.metadata({ description: 'Items per page, 1–100 (default 25)', examples: [25] }))),
});
export type InboundListInput = v.InferOutput<typeof inboundListInput>;

const addressEntry = v.object({
  address: v.pipe(v.string(), v.metadata({ description: 'The address as written (case kept)', examples: ['ada@acme.com'] })),
  name: v.pipe(v.string(), v.metadata({ description: 'The display name, "" when none', examples: ['Ada Lovelace'] })),
});

const attachmentEntry = v.object({
  filename: v.string(),
  content_type: v.string(),
  size_bytes: v.pipe(v.number(), v.integer()),
});

export const inboundEmailSchema = v.object({
  id: uuid,
  account_id: uuid,
  message_id: v.pipe(v.string(), v.metadata({ description: 'The Message-ID header without angle brackets ("" when the message had none)' })),
  from: v.pipe(v.nullable(addressEntry), v.metadata({ description: 'The From address; null when the message had none' })),
  to: v.array(addressEntry),
  cc: v.array(addressEntry),
  subject: v.string(),
  text: v.pipe(v.string(), v.metadata({ description: 'The plain text (an HTML-only message gives the text of its HTML); at most 1 MB of UTF-8' })),
  truncated: v.pipe(v.boolean(), v.metadata({ description: 'True when the text was longer than 1 MB and the rest was cut' })),
  attachments: v.pipe(v.array(attachmentEntry), v.metadata({ description: 'Attachments\' metadata (contents are not kept)' })),
  sent_at: v.pipe(v.nullable(datetime), v.metadata({ description: 'The message\'s Date header; null when absent or unreadable' })),
  received_at: v.pipe(datetime, v.metadata({ description: 'When the service received the message' })),
  size_bytes: v.pipe(v.number(), v.integer(), v.metadata({ description: 'Size of the raw message' })),
  matched_contact_ids: v.pipe(v.array(uuid), v.metadata({ description: 'Contacts whose email is in From, To or Cc (at most 100)' })),
  activity_id: v.pipe(v.nullable(uuid), v.metadata({ description: 'The `email` activity logged on the matched contacts; null when none matched' })),
  created_at: datetime,
});
export type InboundEmail = v.InferOutput<typeof inboundEmailSchema>;

export const inboundEmailPage = v.object({
  items: v.array(inboundEmailSchema),
  next_cursor: v.pipe(v.string(), v.metadata({ description: 'Pass as `cursor` for the next page; "" on the last page' })),
});
