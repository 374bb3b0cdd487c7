/**
 * The inbound-email data layer: every DynamoDB call of contract §11.
 *
 * - Address: `keys.inboundAddress(account)` holds the account's random address key, and the
 *   reverse item `keys.inboundAddressOwner(key)` the account it belongs to (what the SMTP
 *   listener and the SES function read to accept a recipient). Both are written once, together.
 * - Email: `keys.inboundEmail(account, id)` — the API fields plus bookkeeping (`message_hash`,
 *   `text_chunks`, `pending_activity`), with GSI1 attributes for the account's newest-first list.
 *   A text too large for one item continues in `keys.inboundEmailText` items of the same partition.
 * - `keys.inboundMessageId(account, hash)`: one item per Message-ID (hash) and account, written in
 *   the same transaction as the email, so the same message is stored once; it stays (marked
 *   `deleted`) when the email is deleted, so a redelivery does not bring it back.
 * - `keys.inboundEmailByContact(account, contact, …)`: one entry per matched contact (the
 *   `contact_id` filter), sorted like the list.
 * - `keys.inboundEmailByAddress(account, hash, …)`: one entry per distinct address of its From,
 *   To and Cc, under the address's keyed hash (`emailHash`, never the address), so that an
 *   erasure finds the mail of a person's address that matched no contact (contract §18). Written
 *   after the email (and again by a redelivery of the same message), deleted with it.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { backoff } from '../backoff.js';
import { db, tableName } from './client.js';
import { cancellationCodes, cond, eq, exists, itemOf, merge, notExists, pageOf, partition, project, transact, type TransactItem, update } from './expr.js';
import { batchGetItems, batchWriteItems, isConditionFailure, positionOf, queryAll, queryPartition, writeUnlessRefused } from './items.js';
import { readPartition } from './lists.js';
import { emailHash } from './suppression.js';
import { keys, TABLE_DEFINITION } from './table.js';

export interface InboundAddressEntry {
  address: string;
  name: string;
}

export interface InboundAttachmentEntry {
  filename: string;
  content_type: string;
  size_bytes: number;
}

/** The API record of an inbound email (contract §11). */
export interface InboundEmailRecord {
  id: string;
  account_id: string;
  message_id: string;
  from: InboundAddressEntry | null;
  to: InboundAddressEntry[];
  cc: InboundAddressEntry[];
  subject: string;
  text: string;
  truncated: boolean;
  attachments: InboundAttachmentEntry[];
  /** The message's Date header (ISO 8601), null when absent or unreadable. */
  sent_at: string | null;
  received_at: string;
  size_bytes: number;
  matched_contact_ids: string[];
  activity_id: string | null;
  created_at: string;
}

/** What is stored besides the API fields. */
export interface InboundEmailItem extends InboundEmailRecord {
  message_hash: string;
  /** Number of `T#nnn` items holding the rest of the text (0: all of it is in `text`). */
  text_chunks: number;
  /** Contacts matched but the activity not linked yet (a retry finishes the job). */
  pending_activity?: boolean;
  /** Where its raw message is stored (inbound bucket keys; a retried delivery adds its own): an erasure deletes them. */
  raw_keys?: string[];
}

/** Largest item part kept for text in one item (DynamoDB's item limit is 400 KB). */
export const TEXT_ITEM_BYTES = 350_000;

/** The email's fields without the table's bookkeeping (the item holds what `putInboundEmail` wrote). */
const strip = (item: Record<string, unknown>) => itemOf<InboundEmailItem>(item, [TABLE_DEFINITION.ttlAttribute]);

/** Cuts a string into pieces of at most `bytes` UTF-8 bytes, never inside a character. */
export function splitUtf8(text: string, bytes: number): string[] {
  const buf = Buffer.from(text, 'utf8');
  const out: string[] = [];
  let start = 0;
  while (start < buf.length) {
    let end = Math.min(start + bytes, buf.length);
    while (end < buf.length && end > start && (buf[end]! & 0xc0) === 0x80) end--;
    out.push(buf.subarray(start, end).toString('utf8'));
    start = end;
  }
  return out;
}

// ---- address ------------------------------------------------------------------------------------

/**
 * The account's address key: read, or created once (`create()` makes a candidate). Concurrent
 * first calls race on conditional puts in one transaction; the loser reads the winner's key.
 */
export async function addressKeyOf(accountId: string, userId: string, create: () => string): Promise<string> {
  const read = async () => {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.inboundAddress(accountId), ConsistentRead: true }));
    return typeof out.Item?.address_key === 'string' ? out.Item.address_key : undefined;
  };
  const existing = await read();
  if (existing) return existing;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (attempt > 0) await backoff(attempt, 20, 500);
    const key = create();
    const refused = await transact([
      { Put: { TableName: tableName(), Item: { ...keys.inboundAddress(accountId), address_key: key, created_by: userId }, ...notExists() } },
      { Put: { TableName: tableName(), Item: { ...keys.inboundAddressOwner(key), account_id: accountId, user_id: userId }, ...notExists() } },
    ]).catch((error: unknown) => {
      // A transaction cancelled for another reason (a conflict with a concurrent first call) is tried again too.
      if (cancellationCodes(error)) return { at: [] };
      throw error;
    });
    if (!refused) return key;
    // Refused or in conflict: a concurrent first call may have created the address meanwhile.
    const theirs = await read();
    if (theirs) return theirs;
    // Else the key was taken by another account (never in practice: 120 random bits): try another.
  }
  throw new Error('could not create an inbound address');
}

/**
 * The account an address key belongs to, and the user who created the address (the activities
 * logged from its mail are theirs: `created_by`), or undefined.
 */
export async function accountOfAddressKey(addressKey: string): Promise<{ accountId: string; userId: string } | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.inboundAddressOwner(addressKey) }));
  const item = out.Item;
  return typeof item?.account_id === 'string' && typeof item.user_id === 'string' ? { accountId: item.account_id, userId: item.user_id } : undefined;
}

// ---- emails -------------------------------------------------------------------------------------

export type InsertOutcome = { inserted: true } | { inserted: false; existingId: string; deleted: boolean };

/**
 * Stores the email, its text chunks and its Message-ID item in one transaction; when the
 * Message-ID item exists already, nothing is written and the existing email's id is returned.
 */
export async function insertInboundEmail(item: InboundEmailItem, textRest: string[]): Promise<InsertOutcome> {
  const { account_id: accountId, id } = item;
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.inboundMessageId(accountId, item.message_hash), email_id: id, created_at: item.created_at },
        ...notExists(),
      },
    },
    { Put: { TableName: tableName(), Item: { ...keys.inboundEmail(accountId, id), ...keys.inboundEmailGsi(accountId, item.created_at, id), ...item, text_chunks: textRest.length } } },
    ...textRest.map((text, i) => ({ Put: { TableName: tableName(), Item: { ...keys.inboundEmailText(accountId, id, i), text } } })),
  ];
  const refused = await transact(items);
  if (!refused) return { inserted: true };
  if (refused.at[0] !== 0) throw refused.error;
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.inboundMessageId(accountId, item.message_hash), ConsistentRead: true }));
  if (!out.Item) throw refused.error;
  return { inserted: false, existingId: String(out.Item.email_id), deleted: out.Item.deleted === true };
}


/** Records one more stored copy of an email's raw message (a retried delivery of it). Idempotent. */
export async function addRawKey(accountId: string, id: string, rawKey: string): Promise<void> {
  await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.inboundEmail(accountId, id),
      ...update({ append: { raw_keys: [rawKey] } }, exists(), cond('NOT contains(raw_keys, :key)', { ':key': rawKey })),
    },
  });
}

/** The `contact_id` index entries of an email (idempotent). */
export async function putContactEntries(accountId: string, id: string, createdAt: string, contactIds: string[]): Promise<void> {
  await batchWriteItems(contactIds.map((c) => ({ PutRequest: { Item: { ...keys.inboundEmailByContact(accountId, c, createdAt, id), id } } })));
}

/** The distinct addresses an email was sent from or to (From, To, Cc), lower-cased: its address index entries. */
function addressesOf(email: Pick<InboundEmailRecord, 'from' | 'to' | 'cc'>): string[] {
  const all = [email.from, ...email.to, ...email.cc].map((a) => a?.address?.trim().toLowerCase() ?? '');
  return [...new Set(all.filter((a) => a.length > 0))];
}

const addressEntryKeys = async (email: InboundEmailRecord) =>
  Promise.all(addressesOf(email).map(async (a) => keys.inboundEmailByAddress(email.account_id, await emailHash(a), email.created_at, email.id)));

/** The address index entries of an email (idempotent): one small item per distinct address. */
export async function putAddressEntries(email: InboundEmailRecord): Promise<void> {
  await batchWriteItems((await addressEntryKeys(email)).map((k) => ({ PutRequest: { Item: { ...k, id: email.id } } })));
}

/**
 * The ids of the emails sent from or to an address (its index partition), each with the entry's
 * key, oldest first. The partition is the address's: its size is the person's mail, not the account's.
 */
export async function* emailsOfAddress(accountId: string, address: string): AsyncGenerator<{ id: string; key: Record<string, unknown> }> {
  const pk = keys.inboundEmailByAddressPartition(accountId, await emailHash(address));
  for await (const entry of queryAll(merge(partition(pk), project('pk', 'sk', 'id')))) {
    yield { id: String(entry.id), key: { pk: entry.pk, sk: entry.sk } };
  }
}

/** Deletes one address index entry (an entry whose email is gone, or never stored). */
export async function deleteAddressEntry(key: Record<string, unknown>): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
}

/** Links the email to its activity (and ends `pending_activity`). False when the email is gone. */
export async function setEmailActivity(accountId: string, id: string, activityId: string): Promise<boolean> {
  return writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.inboundEmail(accountId, id),
      ...update({ set: { activity_id: activityId }, remove: ['pending_activity'] }, exists()),
    },
  });
}

/** Joins an email item with the text chunks of its partition. */
function assemble(parts: Record<string, unknown>[]): InboundEmailItem | undefined {
  const record = parts.find((p) => p.sk === 'IE');
  if (!record) return undefined;
  const chunks = parts
    .filter((p) => typeof p.sk === 'string' && p.sk.startsWith('T#'))
    .sort((a, b) => String(a.sk).localeCompare(String(b.sk)))
    .map((p) => String(p.text ?? ''));
  const item = strip(record);
  return chunks.length ? { ...item, text: item.text + chunks.join('') } : item;
}

const readEmailPartition = (accountId: string, id: string) => queryPartition(keys.inboundEmailPartition(accountId, id));

/** The email with its whole text, or undefined. */
export async function getInboundEmailItem(accountId: string, id: string): Promise<InboundEmailItem | undefined> {
  return assemble(await readEmailPartition(accountId, id));
}

/** Completes items whose text continues in chunk items. */
async function withText(accountId: string, items: Record<string, unknown>[]): Promise<InboundEmailItem[]> {
  return Promise.all(
    items.map(async (raw) => {
      if (Number(raw.text_chunks ?? 0) > 0) return (await getInboundEmailItem(accountId, String(raw.id))) ?? strip(raw);
      return strip(raw);
    }),
  );
}

/**
 * One page of the account's emails, newest first, strictly after `after` (a position
 * `created_at#id`): the whole list (GSI1) or one contact's entries. Reads `limit + 1` to know
 * whether more exist; `next` is the position of the last item returned.
 */
export async function listInboundEmailItems(accountId: string, opts: { contactId?: string; after?: string; limit: number }): Promise<{ items: InboundEmailItem[]; next?: string }> {
  const want = opts.limit + 1;
  const found: Record<string, unknown>[] = [];
  if (!opts.contactId) {
    const g = TABLE_DEFINITION.gsi1;
    for await (const item of readPartition(
      { IndexName: g.name, ...partition(keys.inboundEmailListPartition(accountId), undefined, 'gsi1') },
      g.sortKey,
      opts.after,
      want,
    )) {
      found.push(item);
      if (found.length >= want) break;
    }
  } else {
    const reader = readPartition(
      partition(keys.inboundEmailByContactPartition(accountId, opts.contactId)),
      'sk',
      opts.after,
      want,
    )[Symbol.asyncIterator]();
    // Entries of deleted emails (a delete interrupted half-way) are skipped: read on until the page is full.
    let done = false;
    while (found.length < want && !done) {
      const batch: Array<{ id: string; position: string }> = [];
      while (batch.length < want - found.length) {
        const n = await reader.next();
        if (n.done) {
          done = true;
          break;
        }
        batch.push({ id: String(n.value.id), position: String(n.value.sk) });
      }
      if (batch.length === 0) break;
      const records = await batchGetItems(batch.map((b) => keys.inboundEmail(accountId, b.id)));
      const byId = new Map(records.map((r) => [String(r.id), r]));
      for (const b of batch) {
        const r = byId.get(b.id);
        if (r && positionOf(r as { created_at: string; id: string }) === b.position) found.push(r);
      }
    }
    await reader.return?.(undefined);
  }
  const page = pageOf(found, opts.limit, (r) => positionOf(r as { created_at: string; id: string }));
  return { items: await withText(accountId, page.items), next: page.next };
}

/**
 * Deletes the email, its text chunks, contact and address entries, and marks its Message-ID item deleted
 * (a redelivery of the same message stays out). Returns the deleted email, or undefined.
 */
export async function deleteInboundEmailItem(accountId: string, id: string): Promise<InboundEmailItem | undefined> {
  const current = await getInboundEmailItem(accountId, id);
  if (!current) return undefined;
  try {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.inboundEmail(accountId, id), ...exists() }));
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
  await batchWriteItems([
    ...Array.from({ length: current.text_chunks }, (_, i) => ({ DeleteRequest: { Key: keys.inboundEmailText(accountId, id, i) } })),
    ...current.matched_contact_ids.map((c) => ({ DeleteRequest: { Key: keys.inboundEmailByContact(accountId, c, current.created_at, id) } })),
    ...(await addressEntryKeys(current)).map((k) => ({ DeleteRequest: { Key: k } })),
  ]);
  await writeUnlessRefused({
    Update: {
      TableName: tableName(),
      Key: keys.inboundMessageId(accountId, current.message_hash),
      ...update({ set: { deleted: true } }, exists()),
    },
  });
  return current;
}

// --- merges (contract §15) ---------------------------------------------------------------------

/**
 * A contact merge moves an email's match from `from` to `to` (its `matched_contact_ids` and its
 * `contact_id` index entries), in one transaction guarded by the list read. Idempotent: an
 * email that no longer names `from` only loses the stale entry.
 */
export async function repointInboundEmailContact(accountId: string, entry: { sk: string; id: string }, from: string, to: string): Promise<void> {
  const id = entry.id;
  for (let attempt = 0; ; attempt++) {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.inboundEmail(accountId, id), ConsistentRead: true, ...project('matched_contact_ids', 'created_at') }));
    const current = out.Item as { matched_contact_ids?: string[]; created_at?: string } | undefined;
    const ids = current?.matched_contact_ids ?? [];
    if (!current || !ids.includes(from)) {
      await db().send(new DeleteCommand({ TableName: tableName(), Key: { pk: keys.inboundEmailByContactPartition(accountId, from), sk: entry.sk } }));
      return;
    }
    const next = [...new Set(ids.map((c) => (c === from ? to : c)))];
    const createdAt = String(current.created_at);
    const refused = await transact([
      { Update: { TableName: tableName(), Key: keys.inboundEmail(accountId, id), ...update({ set: { matched_contact_ids: next } }, eq('matched_contact_ids', ids)) } },
      { Delete: { TableName: tableName(), Key: keys.inboundEmailByContact(accountId, from, createdAt, id) } },
      { Put: { TableName: tableName(), Item: { ...keys.inboundEmailByContact(accountId, to, createdAt, id), id } } },
    ]);
    if (!refused) return;
    if (refused.at[0] !== 0 || attempt >= 10) throw refused.error;
  }
}
