/**
 * Inbound emails (contract §11): the account's address, the processing of a raw message (the
 * same function behind the local SMTP listener and the deployed SES → S3 → Lambda path), and
 * the operations' logic. Data layer: shared/db/inbound-emails.ts.
 *
 * Processing is safe to repeat: the Message-ID item makes the email exist once per account, and
 * an email whose activity was not linked yet (`pending_activity`, a crash half-way) is finished
 * by the next delivery of the same message (S3 event retry, SMTP client retry after a 451).
 */
import { apiShape } from '../schemas/resource.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import PostalMime, { type Address, type Email, type Mailbox } from 'postal-mime';
import { optionalEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import {
  accountOfAddressKey,
  addRawKey,
  addressKeyOf,
  deleteInboundEmailItem,
  getInboundEmailItem,
  type InboundAddressEntry,
  type InboundAttachmentEntry,
  type InboundEmailItem,
  insertInboundEmail,
  listInboundEmailItems,
  putAddressEntries,
  putContactEntries,
  emailsOfAddress,
  deleteAddressEntry,
  setEmailActivity,
  splitUtf8,
  TEXT_ITEM_BYTES,
} from '../db/inbound-emails.js';
import { ApiError, notFound } from '../errors.js';
import { type InboundEmail, type InboundListInput, inboundEmailSchema } from '../schemas/inbound-emails.js';
import type { OperationContext } from './context.js';
import { cursorScope, DEFAULT_LIMIT, type Page } from './listing.js';
import { contactsByEmail, normalizeLookupKey } from './lookups.js';
import { activityEntity, contactEntity } from '../schemas/entities/index.js';
import { create, get } from './records/create.js';
import { purge } from './records/erase.js';
import { familyOf } from './records/family.js';
import { list } from './records/list.js';

/** Largest message accepted (SMTP `552` above it; SES's own limit is 40 MB). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Text kept per email (UTF-8 bytes); the rest is cut and `truncated` is true. */
export const MAX_TEXT_BYTES = 1024 * 1024;
/** Contacts one email is logged on (an activity's `contact_ids` holds at most 100). */
export const MAX_MATCHED_CONTACTS = 100;
/** Distinct addresses looked up per email (one Query each). */
export const MAX_LOOKUP_ADDRESSES = 1_000;
/** Budget for the stored address lists and attachment metadata (keeps the item below 400 KB). */
const MAX_LISTS_BYTES = 40_000;
const MAX_ATTACHMENT_ENTRIES = 200;
const MAX_SUBJECT_CHARS = 2_000;
/** An activity's subject and body limits (contract §9). */
const ACTIVITY_SUBJECT_CHARS = 500;
const ACTIVITY_BODY_CHARS = 65_536;

const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const KEY_LENGTH = 24;
const KEY_RE = /^[a-z2-7]{20,64}$/;

/** `CRM_INBOUND_DOMAIN` (`inbound.localhost` in local mode). */
export const inboundDomain = () => (optionalEnv(bindingEnv('inboundDomain')) ?? 'inbound.localhost').toLowerCase();

/** 24 characters of a 32-letter alphabet: 120 random bits. */
function newAddressKey(): string {
  const bytes = randomBytes(KEY_LENGTH);
  return Array.from(bytes, (b) => KEY_ALPHABET[b & 31]).join('');
}

// ---- address ------------------------------------------------------------------------------------

/** inbound-emails-address: the account's address (created on first use, then stable). */
export async function inboundAddress(ctx: OperationContext): Promise<{ address: string }> {
  const key = await addressKeyOf(ctx.accountId, ctx.userId, newAddressKey);
  return { address: `${key}@${inboundDomain()}` };
}

/** The account (and the user who created its address) a recipient address belongs to, if any. */
export async function ownerOfRecipient(recipient: string): Promise<{ accountId: string; userId: string } | undefined> {
  const address = recipient.trim().replace(/^<|>$/g, '').toLowerCase();
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1) !== inboundDomain()) return undefined;
  const key = address.slice(0, at);
  if (!KEY_RE.test(key)) return undefined;
  return accountOfAddressKey(key);
}

const isInboundAddress = (address: string) => address.toLowerCase().endsWith(`@${inboundDomain()}`);

// ---- parsing ------------------------------------------------------------------------------------

/** Control characters (CR, LF, NUL, …) never reach a stored header value. */
const clean = (s: unknown, max: number) =>
  String(s ?? '')
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, max);

/** Cuts to `max` UTF-16 units without leaving half a surrogate pair. */
function cutChars(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The text of an HTML body: scripts and styles dropped, block ends as line breaks, entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6]|blockquote|pre|table)\s*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

type Parsed = Email;

function flatten(list: Address[] | Address | undefined): Mailbox[] {
  if (!list) return [];
  const arr = Array.isArray(list) ? list : [list];
  return arr.flatMap((a) => (a.group ? a.group : [a as Mailbox]));
}

const entry = (m: Mailbox): InboundAddressEntry => ({ address: clean(m.address, 254), name: clean(m.name, 200) });

/** Takes entries while their JSON fits the remaining budget. */
function within<T>(items: T[], budget: { left: number }, max = Infinity): T[] {
  const out: T[] = [];
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item));
    if (out.length >= max || size > budget.left) break;
    budget.left -= size;
    out.push(item);
  }
  return out;
}

export interface ParsedMessage {
  messageId: string;
  from: InboundAddressEntry | null;
  to: InboundAddressEntry[];
  cc: InboundAddressEntry[];
  /** Every From/To/Cc address (for matching), before any storage cap. */
  allAddresses: string[];
  subject: string;
  text: string;
  truncated: boolean;
  attachments: InboundAttachmentEntry[];
  sentAt: string | null;
}

/**
 * A header field longer than this is cut at the last whitespace before it (whole encoded words
 * kept). The parser decodes a field's encoded words in time that grows faster than the field
 * (80,000 words in one Subject: minutes); 128 KB holds a Subject far beyond any client's, and
 * To/Cc lists of more than 1,000 named recipients (the lookup limit).
 */
export const MAX_HEADER_FIELD_BYTES = 128 * 1024;
/** MIME parts nested deeper than this (the parser refuses them) leave the message's body as raw text. */
const MAX_NESTING_DEPTH = 256;

/** Where the header block ends (the blank line), or -1. */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf < 0) return lf < 0 ? -1 : lf + 2;
  return lf < 0 || crlf + 2 <= lf ? crlf + 4 : lf + 2;
}

/** The message with each header field cut to `MAX_HEADER_FIELD_BYTES` (unchanged when none is longer). */
export function boundHeaderFields(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  const headerBytes = end < 0 ? raw.length : end;
  if (headerBytes <= MAX_HEADER_FIELD_BYTES) return raw;
  const lines = raw.subarray(0, headerBytes).toString('latin1').split(/(?<=\n)/);
  const fields: string[] = [];
  for (const line of lines) {
    if ((line[0] === ' ' || line[0] === '\t') && fields.length) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  const bounded = fields.map((f) => {
    if (f.length <= MAX_HEADER_FIELD_BYTES) return f;
    const cut = f.slice(0, MAX_HEADER_FIELD_BYTES);
    const space = Math.max(cut.lastIndexOf(' '), cut.lastIndexOf('\t'));
    return `${(space > 0 ? cut.slice(0, space) : cut).replace(/[\r\n]+$/, '')}\r\n`;
  });
  return Buffer.concat([Buffer.from(bounded.join(''), 'latin1'), raw.subarray(headerBytes)]);
}

/**
 * Parses a raw message; never an error. A message the parser refuses (MIME nested deeper than
 * 256 parts, …) keeps what its header block says and its body as raw text.
 */
export async function parseMessage(message: Buffer): Promise<ParsedMessage> {
  const raw = boundHeaderFields(message);
  let email: Parsed;
  try {
    email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: MAX_NESTING_DEPTH });
  } catch {
    const end = headerEnd(raw);
    const headers = end < 0 ? undefined : await PostalMime.parse(raw.subarray(0, end)).catch(() => undefined);
    email = { ...(headers ?? { headers: [], headerLines: [] }), attachments: [], text: raw.subarray(end < 0 ? 0 : end).toString('utf8') };
  }
  const fromBox = flatten(email.from).find((m) => m.address) ?? flatten(email.from)[0];
  const toAll = flatten(email.to).map(entry);
  const ccAll = flatten(email.cc).map(entry);
  const from = fromBox ? entry(fromBox) : null;
  const budget = { left: MAX_LISTS_BYTES };
  const to = within(toAll, budget);
  const cc = within(ccAll, budget);
  const attachments = within(
    (email.attachments ?? []).map((a): InboundAttachmentEntry => ({
      filename: clean(a.filename, 255),
      content_type: clean(a.mimeType, 255),
      size_bytes: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
    })),
    budget,
    MAX_ATTACHMENT_ENTRIES,
  );
  const body = email.text ?? (email.html ? htmlToText(email.html) : '');
  const pieces = splitUtf8(body, MAX_TEXT_BYTES);
  const date = email.date ? Date.parse(email.date) : NaN;
  return {
    messageId: clean(email.messageId, 998).replace(/^<|>$/g, ''),
    from,
    to,
    cc,
    allAddresses: [from, ...toAll, ...ccAll].filter((e): e is InboundAddressEntry => Boolean(e?.address)).map((e) => e.address),
    subject: clean(email.subject, MAX_SUBJECT_CHARS),
    text: pieces[0] ?? '',
    truncated: pieces.length > 1,
    attachments,
    sentAt: Number.isFinite(date) ? new Date(date).toISOString() : null,
  };
}

// ---- processing ---------------------------------------------------------------------------------

export interface ProcessedEmail {
  accountId: string;
  emailId: string;
  /** The same Message-ID was stored before in this account (nothing new stored). */
  duplicate: boolean;
}

/**
 * Processes one raw message for its recipients: every recipient address of the inbound domain
 * that belongs to an account stores the message in that account (once per account), matches
 * it to the account's contacts and logs the `email` activity. Other recipients are ignored.
 * Resolves when everything is stored (the SMTP listener answers `250` only then); throws on a
 * storage failure (the caller asks for a retry).
 */
export async function processInboundMessage(raw: Buffer, recipients: readonly string[], opts: { receivedAt?: Date; rawKey?: string } = {}): Promise<ProcessedEmail[]> {
  const owners = new Map<string, { accountId: string; userId: string }>();
  const distinct = [...new Set(recipients.map((x) => x.trim().toLowerCase()))].slice(0, MAX_LOOKUP_ADDRESSES);
  const [found, parsed] = await Promise.all([Promise.all(distinct.map(ownerOfRecipient)), parseMessage(raw)]);
  for (const owner of found) if (owner) owners.set(owner.accountId, owner);
  if (owners.size === 0) return [];
  const receivedAt = (opts.receivedAt ?? new Date()).toISOString();
  const results: ProcessedEmail[] = [];
  for (const owner of owners.values()) results.push(await storeForAccount(owner, raw, parsed, receivedAt, opts.rawKey));
  return results;
}

/** The dedupe key: the Message-ID, or the whole message's hash when it has none. */
const messageHash = (parsed: ParsedMessage, raw: Buffer) =>
  createHash('sha256')
    .update(parsed.messageId ? `id:${parsed.messageId}` : 'raw:')
    .update(parsed.messageId ? '' : raw)
    .digest('base64url');

async function matchContacts(accountId: string, parsed: ParsedMessage): Promise<{ contactIds: string[]; senderIsContact: boolean }> {
  const addresses = [...new Set(parsed.allAddresses.filter((a) => !isInboundAddress(a)).map((a) => normalizeLookupKey(a.trim())))].slice(0, MAX_LOOKUP_ADDRESSES);
  if (addresses.length === 0) return { contactIds: [], senderIsContact: false };
  const found = await contactsByEmail(accountId, addresses);
  const ids: string[] = [];
  // From first, then To and Cc in their order: the first 100 matches are logged.
  for (const a of addresses) for (const c of found.get(a) ?? []) if (!ids.includes(c.id)) ids.push(c.id);
  const sender = parsed.from?.address ? normalizeLookupKey(parsed.from.address.trim()) : undefined;
  return { contactIds: ids.slice(0, MAX_MATCHED_CONTACTS), senderIsContact: Boolean(sender && found.has(sender) && !isInboundAddress(sender)) };
}

async function storeForAccount(owner: { accountId: string; userId: string }, raw: Buffer, parsed: ParsedMessage, receivedAt: string, rawKey: string | undefined): Promise<ProcessedEmail> {
  const { accountId } = owner;
  const { contactIds, senderIsContact } = await matchContacts(accountId, parsed);
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  const base: InboundEmailItem = {
    id,
    account_id: accountId,
    message_id: parsed.messageId,
    from: parsed.from,
    to: parsed.to,
    cc: parsed.cc,
    subject: parsed.subject,
    text: '',
    truncated: parsed.truncated,
    attachments: parsed.attachments,
    sent_at: parsed.sentAt,
    received_at: receivedAt,
    size_bytes: raw.length,
    matched_contact_ids: contactIds,
    activity_id: null,
    created_at: createdAt,
    message_hash: messageHash(parsed, raw),
    text_chunks: 0,
    ...(contactIds.length ? { pending_activity: true } : {}),
    ...(rawKey ? { raw_keys: [rawKey] } : {}),
  };
  // What fits beside the other fields stays in the item; the rest goes to chunk items.
  const room = Math.max(0, TEXT_ITEM_BYTES - Buffer.byteLength(JSON.stringify(base)));
  const [head = '', ...rest] = room > 0 ? splitUtf8(parsed.text, room) : ['', parsed.text];
  const tail = rest.length ? splitUtf8(rest.join(''), TEXT_ITEM_BYTES) : [];
  const item: InboundEmailItem = { ...base, text: head };
  const outcome = await insertInboundEmail(item, tail);
  if (!outcome.inserted) {
    if (!outcome.deleted) {
      const existing = await getInboundEmailItem(accountId, outcome.existingId);
      if (existing && rawKey && !existing.raw_keys?.includes(rawKey)) await addRawKey(accountId, existing.id, rawKey);
      // A crash before the address entries were written: this delivery writes them (idempotent).
      if (existing) await putAddressEntries(existing);
      if (existing?.pending_activity) await logActivity(owner, existing, senderIsContact, true);
    }
    return { accountId, emailId: outcome.existingId, duplicate: true };
  }
  await Promise.all([putAddressEntries(item), contactIds.length ? logActivity(owner, { ...item, text: parsed.text }, senderIsContact, false) : undefined]);
  return { accountId, emailId: id, duplicate: false };
}

/** The writes of processing an email are the email's (the change log's `actor`, contract §12). */
const systemCtx = (owner: { accountId: string; userId: string }, emailId: string): OperationContext => ({
  accountId: owner.accountId,
  userId: owner.userId,
  operation: 'inbound-emails-process',
  headers: {},
  actor: { type: 'inbound_email', id: emailId },
});

/**
 * Creates the `email` activity on the matched contacts and links it to the email. `resume`: a
 * previous attempt may have created the activity already; it is looked for first.
 */
async function logActivity(owner: { accountId: string; userId: string }, email: InboundEmailItem, senderIsContact: boolean, resume: boolean): Promise<void> {
  const ctx = systemCtx(owner, email.id);
  // The contact_id entries are written while the activity is created (both are idempotent).
  const entries = putContactEntries(owner.accountId, email.id, email.created_at, email.matched_contact_ids);
  try {
    await createAndLink(owner, ctx, email, senderIsContact, resume);
  } finally {
    await entries;
  }
}

async function createAndLink(owner: { accountId: string; userId: string }, ctx: OperationContext, email: InboundEmailItem, senderIsContact: boolean, resume: boolean): Promise<void> {
  if (resume) {
    const page = await list(familyOf(activityEntity), { ...ctx, operation: 'activities-list' }, { contact_id: email.matched_contact_ids[0], limit: 100 });
    const earlier = page.items.find((a) => (a as Record<string, unknown>).inbound_email_id === email.id) as { id: string } | undefined;
    if (earlier) {
      await setEmailActivity(owner.accountId, email.id, earlier.id);
      return;
    }
  }
  const fields = (contactIds: string[]) => ({
    type: 'email',
    subject: cutChars(email.subject, ACTIVITY_SUBJECT_CHARS),
    body: cutChars(email.text, ACTIVITY_BODY_CHARS),
    occurred_at: email.sent_at ?? email.received_at,
    direction: senderIsContact ? 'inbound' : 'outbound',
    contact_ids: contactIds,
  });
  let activity: { id: string };
  try {
    activity = (await create(familyOf(activityEntity), ctx, { id: undefined, fields: fields(email.matched_contact_ids) } as never, { readOnly: { inbound_email_id: email.id } })) as { id: string };
  } catch (error) {
    // A matched contact deleted meanwhile: log on the ones that are left.
    if (!(error instanceof ApiError && error.code === 'activities.invalid_contact_ids')) throw error;
    const existing = await Promise.all(email.matched_contact_ids.map(async (c) => ((await get(familyOf(contactEntity), ctx, c).catch(() => undefined)) ? c : undefined)));
    const ids = existing.filter((c): c is string => Boolean(c));
    if (ids.length === 0) return;
    activity = (await create(familyOf(activityEntity), ctx, { id: undefined, fields: fields(ids) } as never, { readOnly: { inbound_email_id: email.id } })) as { id: string };
  }
  await setEmailActivity(owner.accountId, email.id, activity.id);
}

// ---- operations ---------------------------------------------------------------------------------

/** The API shape: the record schema's fields; a field an older item lacks is null. */
const toApi: (item: InboundEmailItem) => InboundEmail = apiShape(inboundEmailSchema, null);

export async function getInboundEmail(ctx: OperationContext, id: string): Promise<InboundEmail> {
  const item = await getInboundEmailItem(ctx.accountId, id);
  if (!item) throw notFound('inbound_emails', 'inbound email');
  return toApi(item);
}

export async function deleteInboundEmail(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  if (!(await deleteInboundEmailItem(ctx.accountId, id))) throw notFound('inbound_emails', 'inbound email');
  return { deleted: true };
}

/** inbound-emails-list: newest first, `contact_id` filter, the contract's cursor rules (§4). */
export async function listInboundEmails(ctx: OperationContext, input: InboundListInput): Promise<Page<InboundEmail>> {
  const { after, next } = await cursorScope(ctx, 'inbound_emails', input.cursor, { contact_id: input.contact_id ?? null });
  const page = await listInboundEmailItems(ctx.accountId, { contactId: input.contact_id, after, limit: input.limit ?? DEFAULT_LIMIT });
  return { items: page.items.map(toApi), next_cursor: next(page.next) };
}

/**
 * An erasure's side of inbound mail (contract §18): every email matched to the contact (its
 * index partition) or sent from or to one of `addresses` (the address index, under each
 * address's keyed hash) is deleted with the activity logged from it: partitions bounded by the
 * person. Returns how many emails and activities were deleted. `beforeActivity` runs before an
 * activity's deletion (the erasure marks it and redacts its history), `beforeEmail` before an
 * email's (the erasure deletes its raw message: `raw_keys`). Idempotent.
 */
export async function eraseInboundEmailsOf(
  accountId: string,
  contactId: string,
  addresses: string[],
  hooks: { beforeActivity?: (activityId: string) => Promise<void>; beforeEmail?: (email: InboundEmailItem) => Promise<void> } = {},
): Promise<{ emails: number; activities: number }> {
  const activities = familyOf(activityEntity);
  let emails = 0;
  let logged = 0;
  const erase = async (email: InboundEmailItem) => {
    if (email.activity_id) {
      await hooks.beforeActivity?.(email.activity_id);
      if (await purge(activities, accountId, email.activity_id)) logged++;
    }
    await hooks.beforeEmail?.(email);
    if (await deleteInboundEmailItem(accountId, email.id)) emails++;
  };
  for (;;) {
    const page = await listInboundEmailItems(accountId, { contactId, limit: 100 });
    if (page.items.length === 0) break;
    for (const email of page.items) await erase(email);
  }
  for (const address of addresses) {
    for await (const entry of emailsOfAddress(accountId, address)) {
      const email = await getInboundEmailItem(accountId, entry.id);
      // Deleting the email deletes its entries; an entry whose email is gone goes alone.
      if (email) await erase(email);
      else await deleteAddressEntry(entry.key);
    }
  }
  return { emails, activities: logged };
}
