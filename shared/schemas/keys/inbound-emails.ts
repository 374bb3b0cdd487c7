/** Keys of inbound emails (contract §11). */
import { ACCOUNT, defineKeys, ORDER, personalFlags } from './define.js';

const EMAIL = `${ACCOUNT}#ie#{id}`;
const EMAILS = `${ACCOUNT}#ie`;
const BY_CONTACT = `${ACCOUNT}#iec#{contactId}`;
const BY_ADDRESS = `${ACCOUNT}#iea#{addressHash}`;

export const INBOUND_EMAIL_KEYS = defineKeys({
  /** The account's inbound address key (created once, stable). */
  inboundAddress: [`${ACCOUNT}#ia`, 'ADDR'],
  /** Reverse item: which account an inbound address key belongs to (the SMTP/SES recipient check). */
  inboundAddressOwner: ['INBOUND#{addressKey}', 'OWNER'],
  /** An inbound email: its record (`sk` IE) and the chunks of a long text (`sk` T#nnn) share one partition. */
  inboundEmailPartition: EMAIL,
  inboundEmail: [EMAIL, 'IE'],
  inboundEmailText: [EMAIL, 'T#{n:3}'],
  /** GSI1 attributes of an inbound email: the account's list, newest first. */
  inboundEmailGsi: { gsi1: [EMAILS, ORDER] },
  inboundEmailListPartition: EMAILS,
  /** Index entry: an inbound email matched to a contact (the `contact_id` filter), sorted like the list. */
  inboundEmailByContactPartition: BY_CONTACT,
  inboundEmailByContact: [BY_CONTACT, ORDER],
  /**
   * Index entry: an inbound email sent from or to an address (its From, To and Cc), under the
   * address's keyed hash (never the address): how an erasure finds the mail of a person's address
   * that matched no contact when it arrived (contract §18).
   */
  inboundEmailByAddressPartition: BY_ADDRESS,
  inboundEmailByAddress: [BY_ADDRESS, ORDER],
  /** One item per (account, Message-ID hash): the same message is stored once per account. */
  inboundMessageId: [`${ACCOUNT}#iem#{messageHash}`, 'M'],
});

export const INBOUND_EMAIL_PERSONAL = /* @__PURE__ */ personalFlags(INBOUND_EMAIL_KEYS, {
  inboundAddress: false,
  inboundAddressOwner: false,
  inboundEmail: true,
  inboundEmailText: true,
  inboundEmailByContact: false,
  inboundEmailByAddress: true,
  inboundMessageId: false,
});
