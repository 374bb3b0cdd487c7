import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type ApiKeyItem, insertApiKey, revokeApiKeyItem } from '../db/api-keys.js';
import { deleteTokenItem, getTokenItem } from '../db/tokens.js';
import type { AuthContext } from '../domain/context.js';
import { FULL_SCOPES, KEY_PREFIX_LENGTH, TOKEN_PREFIX } from '../schemas/scope-names.js';

/** Tokens are stored only as SHA-256 hashes: the table never holds a usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** `crm_` + 43 base64url characters (32 random bytes). */
export const newToken = () => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;

/** The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` work too. */
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{16,512})$/i;

export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header.trim())?.[1] : undefined;
}

/**
 * What the authorizer hands every operation (API Gateway's simple-response context: strings and
 * numbers only, so scopes travel space-separated). `expiresAt` lets the operation refuse an
 * expired key even when API Gateway answers from its authorizer cache.
 */
export interface AuthorizerContext {
  accountId: string;
  userId: string;
  keyId?: string;
  /** The member the key acts for: then `userId` is the member's id too (what the call creates has `created_by` the member). */
  memberId?: string;
  scopes: string;
  expiresAt?: string;
}

export interface IssueOptions {
  name?: string;
  scopes?: readonly string[];
  expiresAt?: string | null;
  /** A given token (CRM_DEV_TOKENS) instead of a new one. */
  token?: string;
  /** A given key id (seeded tokens: derived from the hash, so seeding twice writes nothing). */
  id?: string;
  /** The member the key acts for (checked active by the caller). */
  memberId?: string | null;
}

/** Creates an API key: its record and its token item. The token is returned once, here. */
export async function issueKey(owner: AuthContext, opts: IssueOptions = {}): Promise<{ key: ApiKeyItem; token: string; created: boolean }> {
  const token = opts.token ?? newToken();
  const key: ApiKeyItem = {
    id: opts.id ?? randomUUID(),
    account_id: owner.accountId,
    name: opts.name ?? 'admin token',
    prefix: token.slice(0, KEY_PREFIX_LENGTH),
    scopes: [...(opts.scopes ?? FULL_SCOPES)],
    expires_at: opts.expiresAt ?? null,
    last_used_at: null,
    revoked_at: null,
    member_id: opts.memberId ?? null,
    created_by: owner.userId,
    created_at: new Date().toISOString(),
    token_hash: hashToken(token),
  };
  const created = await insertApiKey(key);
  return { key, token, created };
}

/** A new token for an account and user (the admin command; tests): a key with `*` and `api_keys:manage` unless told otherwise. */
export async function issueToken(auth: AuthContext, opts: Omit<IssueOptions, 'token' | 'id'> = {}): Promise<string> {
  return (await issueKey(auth, opts)).token;
}

/** A key id derived from a token's hash (UUID-shaped): the same token always gets the same key. */
export function keyIdOf(token: string): string {
  const h = hashToken(`key-id:${token}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16]!, 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Seeds a given token (CRM_DEV_TOKENS) as a key with `*` and `api_keys:manage`, once: on a later
 * start with the same data the key exists and is left as it is (a revoked one stays revoked).
 */
export async function saveToken(token: string, auth: AuthContext, name = 'dev token'): Promise<void> {
  await issueKey(auth, { token, id: keyIdOf(token), name });
}

/** Revokes by token or by its hash (the hash is what an operator may have on record). */
export async function revokeToken(tokenOrHash: string): Promise<boolean> {
  const hash = /^[0-9a-f]{64}$/.test(tokenOrHash) ? tokenOrHash : hashToken(tokenOrHash);
  const owner = await getTokenItem(hash);
  if (!owner) return false;
  if (owner.keyId) await revokeApiKeyItem(owner.accountId, owner.keyId, new Date().toISOString());
  else await deleteTokenItem(hash);
  return true;
}

/** The authorizer's context of a token: undefined when it is unknown, revoked or expired. */
export async function resolveToken(token: string, now = Date.now()): Promise<AuthorizerContext | undefined> {
  const owner = await getTokenItem(hashToken(token));
  if (!owner) return undefined;
  if (owner.expiresAt && Date.parse(owner.expiresAt) <= now) return undefined;
  return {
    accountId: owner.accountId,
    userId: owner.memberId ?? owner.userId,
    ...(owner.keyId ? { keyId: owner.keyId } : {}),
    ...(owner.memberId ? { memberId: owner.memberId } : {}),
    scopes: (owner.scopes ?? FULL_SCOPES).join(' '),
    ...(owner.expiresAt ? { expiresAt: owner.expiresAt } : {}),
  };
}
