/**
 * Members of an account in the table (contract §20): every DynamoDB call of the family.
 *
 * - Member: `A#<acct>#mb / <id>`: its API fields and `ver` (+1 on every write; the condition of each).
 * - Head: `A#<acct>#mb / H`: `count` (members, at most `max`), + 1 in each create's transaction.
 * - Email claim: `A#<acct>#mb / e#<lowercased email>`: `id`, the member holding the address; put
 *   with the member (on condition it is absent) and moved by an update of its email, so an
 *   address is one member's under concurrent creates and updates.
 * - Name entry: `A#<acct>#mb#<status> / <folded name>\u0001<id>`: a copy of the member, moved in
 *   the transaction of every write that changes its name or status; members-list reads them.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type MemberStatus, memberEmailKey, memberNameKey } from '../schemas/members.js';
import { db, tableName } from './client.js';
import { afterCursor, cancellationCodes, eq, is, itemOf, notExists, or, type TransactItem, transact, update } from './expr.js';
import { keys, TABLE_DEFINITION } from './table.js';

/** A member as stored (its keys left out). */
export interface MemberItem {
  id: string;
  account_id: string;
  email: string;
  name: string;
  status: MemberStatus;
  created_at: string;
  updated_at: string;
  deactivated_at: string | null;
  ver: number;
}

/** Why a member write was refused: the member changed (`member`), the address is another member's (`email`), the account is full (`head`), or a concurrent transaction on the same items (`race`). */
export type MemberRefusal = 'member' | 'email' | 'head' | 'race';

const get = async (key: { pk: string; sk: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

/** The name entry of a member: its copy (without `ver`) under its status and name. */
function entryOf(item: MemberItem): TransactItem {
  const { ver: _ver, ...member } = item;
  return { Put: { TableName: tableName(), Item: { ...keys.memberByName(item.account_id, item.status, memberNameKey(item.name, item.id)), ...member } } };
}
const entryKey = (item: MemberItem) => keys.memberByName(item.account_id, item.status, memberNameKey(item.name, item.id));
const claimKey = (accountId: string, email: string) => keys.memberEmail(accountId, memberEmailKey(email));

/** One transaction: undefined when written, else the label of the first refused item (`race`: cancelled by a concurrent transaction). */
async function write(items: TransactItem[], labels: readonly MemberRefusal[]): Promise<MemberRefusal | undefined> {
  try {
    return (await transact(items, labels))?.which as MemberRefusal | undefined;
  } catch (error) {
    if (cancellationCodes(error)?.includes('TransactionConflict')) return 'race';
    throw error;
  }
}

export const getMemberItem = async (accountId: string, id: string): Promise<MemberItem | undefined> => itemOf<MemberItem>(await get(keys.member(accountId, id)));

/** The id of the member holding an address (compared case-insensitively), if any. */
export async function memberIdByEmail(accountId: string, email: string): Promise<string | undefined> {
  const raw = await get(claimKey(accountId, email));
  return typeof raw?.id === 'string' ? raw.id : undefined;
}

export async function memberCount(accountId: string): Promise<number> {
  return Number((await get(keys.memberHead(accountId)))?.count ?? 0);
}

/**
 * Creates a member: its item, its name entry, the claim of its address and the head's count + 1,
 * on condition that the address is unclaimed and the count below `max`.
 */
export function putMember(item: MemberItem, max: number): Promise<MemberRefusal | undefined> {
  const acct = item.account_id;
  return write(
    [
      { Put: { TableName: tableName(), Item: { ...keys.member(acct, item.id), ...item }, ...notExists() } },
      { Put: { TableName: tableName(), Item: { ...claimKey(acct, item.email), id: item.id }, ...notExists() } },
      { Update: { TableName: tableName(), Key: keys.memberHead(acct), ...update({ add: { count: 1 } }, or(notExists('count'), is('count', '<', max))) } },
      entryOf(item),
    ],
    ['member', 'email', 'head'],
  );
}

/**
 * Writes a changed member (`next`, whose `ver` is `before.ver` + 1) on condition it is still at
 * `before.ver`: its name entry moved when its name or status changed, its address's claim moved
 * (the old one released, the new one taken on condition it is free) when its email changed other
 * than in case; `extra` items in the same transaction (a rename's META override).
 */
export function replaceMember(before: MemberItem, next: MemberItem, extra: TransactItem[] = []): Promise<MemberRefusal | undefined> {
  const acct = before.account_id;
  const items: TransactItem[] = [{ Put: { TableName: tableName(), Item: { ...keys.member(acct, next.id), ...next }, ...eq('ver', before.ver) } }, ...extra];
  const labels: MemberRefusal[] = ['member', ...extra.map(() => 'member' as const)];
  const [from, to] = [entryKey(before), entryKey(next)];
  if (from.pk !== to.pk || from.sk !== to.sk) {
    items.push({ Delete: { TableName: tableName(), Key: from } });
    labels.push('member');
  }
  items.push(entryOf(next));
  labels.push('member');
  if (memberEmailKey(before.email) !== memberEmailKey(next.email)) {
    items.push(
      { Delete: { TableName: tableName(), Key: claimKey(acct, before.email), ...eq('id', before.id) } },
      { Put: { TableName: tableName(), Item: { ...claimKey(acct, next.email), id: next.id }, ...notExists() } },
    );
    labels.push('member', 'email');
  }
  return write(items, labels);
}

/**
 * A page of name entries of one status, in name order, after the sort key `after` (exclusive):
 * at most `limit` items, each with its sort key (`at`).
 */
export async function membersByName(accountId: string, status: MemberStatus, after: string | undefined, limit: number): Promise<(Omit<MemberItem, 'ver'> & { at: string })[]> {
  const out = await db().send(new QueryCommand({ TableName: tableName(), ...afterCursor(keys.memberByName(accountId, status, '').pk, after, { forward: true }), Limit: limit, ConsistentRead: true }));
  return (out.Items ?? []).map((raw) => ({ ...itemOf<Omit<MemberItem, 'ver'>>(raw), at: String(raw[TABLE_DEFINITION.sortKey]) }));
}
