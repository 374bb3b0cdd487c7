import { createHash, randomBytes } from 'node:crypto';
import { deleteTokenItem, getTokenItem, putTokenItem } from '../db/tokens.js';
import type { AuthContext } from '../domain/context.js';

/** Tokens are stored only as SHA-256 hashes: the table never holds a usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export const newToken = () => `crm_${randomBytes(32).toString('base64url')}`;

/** The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` work too. */
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{16,512})$/i;

export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header.trim())?.[1] : undefined;
}

export async function saveToken(token: string, auth: AuthContext): Promise<void> {
  await putTokenItem(hashToken(token), auth);
}

export async function issueToken(auth: AuthContext): Promise<string> {
  const token = newToken();
  await saveToken(token, auth);
  return token;
}

/** Revokes by token or by its hash (the hash is what an operator may have on record). */
export async function revokeToken(tokenOrHash: string): Promise<boolean> {
  const hash = /^[0-9a-f]{64}$/.test(tokenOrHash) ? tokenOrHash : hashToken(tokenOrHash);
  return deleteTokenItem(hash);
}

export const resolveToken = (token: string): Promise<AuthContext | undefined> => getTokenItem(hashToken(token));
