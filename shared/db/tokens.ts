/** Access-token items: keyed by the token's SHA-256 hash only (shared/auth/tokens.ts hashes). */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { keys } from './table.js';

export interface TokenOwner {
  accountId: string;
  userId: string;
}

export async function putTokenItem(hash: string, owner: TokenOwner): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.token(hash), account_id: owner.accountId, user_id: owner.userId, created_at: new Date().toISOString() },
    }),
  );
}

/** Removes a token; false when there was none. */
export async function deleteTokenItem(hash: string): Promise<boolean> {
  const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.token(hash), ReturnValues: 'ALL_OLD' }));
  return Boolean(out.Attributes);
}

export async function getTokenItem(hash: string): Promise<TokenOwner | undefined> {
  const item = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hash) }))).Item;
  if (!item || typeof item.account_id !== 'string' || typeof item.user_id !== 'string') return undefined;
  return { accountId: item.account_id, userId: item.user_id };
}
