/**
 * Access-token items: keyed by the token's SHA-256 hash only (shared/auth/tokens.ts hashes). The
 * authorizer reads this one item per (uncached) call: it carries what a call needs — account,
 * user, key id, scopes and expiry — so no second read is needed. The key's record (name, prefix,
 * last use, revocation) is shared/db/api-keys.ts; revoking a key deletes its token item.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { keys } from './table.js';

export interface TokenOwner {
  accountId: string;
  userId: string;
  /** The API key this token is (absent on token items written before keys existed). */
  keyId?: string;
  /** Absent on token items written before keys existed: those hold `*` and `api_keys:manage`. */
  scopes?: string[];
  /** ISO timestamp; absent or null: never. */
  expiresAt?: string | null;
  /** The member the key acts for (api-keys-create `member_id`), if any. */
  memberId?: string;
}

/** The token item of a key (written in the key's transaction, shared/db/api-keys.ts). */
export const tokenItem = (hash: string, owner: TokenOwner & { createdAt: string }) => ({
  ...keys.token(hash),
  account_id: owner.accountId,
  user_id: owner.userId,
  ...(owner.keyId ? { key_id: owner.keyId } : {}),
  ...(owner.memberId ? { member_id: owner.memberId } : {}),
  ...(owner.scopes ? { scopes: owner.scopes } : {}),
  expires_at: owner.expiresAt ?? null,
  created_at: owner.createdAt,
});

/** Removes a token; its former owner, or undefined when there was none. */
export async function deleteTokenItem(hash: string): Promise<TokenOwner | undefined> {
  const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.token(hash), ReturnValues: 'ALL_OLD' }));
  return ownerOf(out.Attributes);
}

function ownerOf(item: Record<string, unknown> | undefined): TokenOwner | undefined {
  if (!item || typeof item.account_id !== 'string' || typeof item.user_id !== 'string') return undefined;
  return {
    accountId: item.account_id,
    userId: item.user_id,
    ...(typeof item.key_id === 'string' ? { keyId: item.key_id } : {}),
    ...(typeof item.member_id === 'string' ? { memberId: item.member_id } : {}),
    ...(Array.isArray(item.scopes) ? { scopes: item.scopes.filter((s): s is string => typeof s === 'string') } : {}),
    expiresAt: typeof item.expires_at === 'string' ? item.expires_at : null,
  };
}

export async function getTokenItem(hash: string): Promise<TokenOwner | undefined> {
  return ownerOf((await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hash) }))).Item);
}
