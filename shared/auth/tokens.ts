import { createHash, randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/client.js';
import { keys } from '../db/table.js';
import type { AuthContext } from '../http/operation.js';

/** Tokens are stored only as SHA-256 hashes: the table never holds a usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export const newToken = () => `crm_${randomBytes(32).toString('base64url')}`;

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{16,512})$/;

export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header.trim())?.[1] : undefined;
}

export async function saveToken(token: string, auth: AuthContext): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.token(hashToken(token)), account_id: auth.accountId, user_id: auth.userId, created_at: new Date().toISOString() },
    }),
  );
}

export async function issueToken(auth: AuthContext): Promise<string> {
  const token = newToken();
  await saveToken(token, auth);
  return token;
}

/** Revokes by token or by its hash (the hash is what an operator may have on record). */
export async function revokeToken(tokenOrHash: string): Promise<boolean> {
  const hash = /^[0-9a-f]{64}$/.test(tokenOrHash) ? tokenOrHash : hashToken(tokenOrHash);
  const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.token(hash), ReturnValues: 'ALL_OLD' }));
  return Boolean(out.Attributes);
}

export async function resolveToken(token: string): Promise<AuthContext | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)) }));
  const item = out.Item;
  if (!item || typeof item.account_id !== 'string' || typeof item.user_id !== 'string') return undefined;
  return { accountId: item.account_id, userId: item.user_id };
}
