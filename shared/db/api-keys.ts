/**
 * API key records (contract §14). A key is two items written together: its record (pk
 * `A#<account>#key#<id>`, GSI1 lists an account's keys newest first) and its token item
 * (shared/db/tokens.ts, keyed by the token's hash), which is all the authorizer reads. Revoking
 * sets `revoked_at` on the record and deletes the token item in one transaction.
 *
 * A key's use (`last_used_at`, written by every call of the key) lives in the control table
 * (shared/db/control.ts: no stream), under the key's own key; reading a key merges it in (a record
 * written before the control table may still hold its own `last_used_at`).
 */
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { controlTableName } from './control.js';
import { eq, exists, is, itemOf, notExists, or, project, transact, transactUnlessRefused, update } from './expr.js';
import { queryNewestFirst, writeUnlessRefused } from './items.js';
import { keys } from './table.js';
import { tokenItem } from './tokens.js';

export interface ApiKeyItem {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** The member the key acts for (absent on keys written before members existed). */
  member_id?: string | null;
  created_by: string;
  created_at: string;
  /** SHA-256 of the token (never the token): revocation deletes the token item by it. */
  token_hash: string;
}

/**
 * Writes a key's record and token item. `false` when either exists already (a seeded dev
 * token's key id is derived from its hash, so seeding again at start-up changes nothing, and a
 * revoked seeded key stays revoked).
 */
export async function insertApiKey(item: ApiKeyItem): Promise<boolean> {
  return transactUnlessRefused([
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.apiKey(item.account_id, item.id), ...keys.apiKeyGsi(item.account_id, item.created_at, item.id), ...item },
        ...notExists(),
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: tokenItem(item.token_hash, { accountId: item.account_id, userId: item.created_by, keyId: item.id, ...(item.member_id ? { memberId: item.member_id } : {}), scopes: item.scopes, expiresAt: item.expires_at, createdAt: item.created_at }),
        ...notExists(),
      },
    },
  ]);
}

/** The later of two `last_used_at` values (either may be missing). */
const later = (a: unknown, b: unknown): string | null => {
  const values = [a, b].filter((v): v is string => typeof v === 'string');
  return values.length === 0 ? null : values.reduce((x, y) => (x > y ? x : y));
};

export async function getApiKeyItem(accountId: string, id: string): Promise<ApiKeyItem | undefined> {
  const [out, use] = await Promise.all([
    db().send(new GetCommand({ TableName: tableName(), Key: keys.apiKey(accountId, id), ConsistentRead: true })),
    db().send(new GetCommand({ TableName: controlTableName(), Key: keys.apiKey(accountId, id), ConsistentRead: true, ...project('last_used_at') })),
  ]);
  const key = itemOf<ApiKeyItem>(out.Item);
  return key && { ...key, last_used_at: later(key.last_used_at, use.Item?.last_used_at) };
}

/** The keys with their use merged in from the control table (one BatchGetItem, retried for unprocessed keys). */
async function withUse(accountId: string, items: ApiKeyItem[]): Promise<ApiKeyItem[]> {
  if (items.length === 0) return items;
  const table = controlTableName();
  const used = new Map<string, unknown>();
  let pending: Record<string, unknown>[] | undefined = items.map((k) => keys.apiKey(accountId, k.id));
  for (let attempt = 0; pending && pending.length > 0 && attempt < 5; attempt++) {
    const out = await db().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ...project('pk', 'last_used_at') } } }));
    for (const item of out.Responses?.[table] ?? []) used.set(String(item.pk), item.last_used_at);
    pending = out.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined;
  }
  return items.map((k) => ({ ...k, last_used_at: later(k.last_used_at, used.get(keys.apiKey(accountId, k.id).pk)) }));
}

/** One page of the account's keys, newest first, after `after` (a `created_at#id` position). */
export async function queryApiKeys(accountId: string, limit: number, after?: string): Promise<ApiKeyItem[]> {
  const items = await queryNewestFirst(keys.apiKeyListPartition(accountId), limit, after);
  return withUse(accountId, items.map((i) => itemOf<ApiKeyItem>(i)));
}

/**
 * Revokes a key: `revoked_at` on the record and its token item deleted, together. Returns the
 * key as it is afterwards (unchanged when it was revoked already), undefined when missing.
 */
export async function revokeApiKeyItem(accountId: string, id: string, now: string): Promise<ApiKeyItem | undefined> {
  const key = await getApiKeyItem(accountId, id);
  if (!key || key.revoked_at) return key;
  const refused = await transact([
    { Update: { TableName: tableName(), Key: keys.apiKey(accountId, id), ...update({ set: { revoked_at: now } }, exists(), eq('revoked_at', null)) } },
    { Delete: { TableName: tableName(), Key: keys.token(key.token_hash) } },
  ]);
  // Revoked meanwhile by another call: answer what is stored.
  if (refused) return getApiKeyItem(accountId, id);
  return { ...key, revoked_at: now };
}

/**
 * Sets the key's `last_used_at` (control table) unless it was set less than a minute before `now`
 * (`cutoff` = now − 60 s): at most one successful write per key per minute, whatever the number
 * of instances. Only a key's token reaches here (the authorizer's context), so no item is
 * written for a key that does not exist.
 */
export async function touchApiKey(accountId: string, id: string, now: string, cutoff: string): Promise<void> {
  await writeUnlessRefused({
    Update: {
      TableName: controlTableName(),
      Key: keys.apiKey(accountId, id),
      ...update({ set: { last_used_at: now } }, or(notExists('last_used_at'), is('last_used_at', '<', cutoff))),
    },
  });
}
