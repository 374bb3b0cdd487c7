/**
 * API keys (contract §14): create (no granting of scopes the caller lacks), list newest first,
 * get, revoke. `last_used_at` is shared/domain/key-use.ts (every operation bundles it).
 */
import { type ApiKeyItem, getApiKeyItem, queryApiKeys, revokeApiKeyItem } from '../db/api-keys.js';
import { getMemberItem } from '../db/members.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { covers, scopesFromContext } from '../auth/scopes.js';
import { issueKey } from '../auth/tokens.js';
import type { ApiKeyCreateInput, ApiKeyListInput, ApiKeyRecord } from '../schemas/api-keys.js';
import type { OperationContext } from './context.js';
import { cursorScope, listPosition, type Page } from './listing.js';

export function apiKeyToApi(item: ApiKeyItem): ApiKeyRecord {
  return {
    id: item.id,
    name: item.name,
    prefix: item.prefix,
    scopes: item.scopes,
    expires_at: item.expires_at ?? null,
    last_used_at: item.last_used_at ?? null,
    revoked_at: item.revoked_at ?? null,
    member_id: item.member_id ?? null,
    created_by: item.created_by,
    created_at: item.created_at,
  };
}

export async function createApiKey(ctx: OperationContext, input: ApiKeyCreateInput): Promise<{ api_key: ApiKeyRecord; token: string }> {
  const held = scopesFromContext(ctx.scopes);
  const lacking = input.scopes.filter((s) => !covers(held, s));
  if (lacking.length) {
    throw new ApiError('api_keys.invalid_scopes', `this key cannot grant scopes it does not hold: ${lacking.join(', ')}`, lacking.map((s) => ({ path: 'scopes', message: `not held: ${s}` })));
  }
  const expiresAt = input.expires_at ? new Date(input.expires_at).toISOString() : null;
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) throw invalidRequest('api_keys', 'expires_at must be in the future', [{ path: 'expires_at', message: 'must be in the future' }]);
  if (input.member_id && (await getMemberItem(ctx.accountId, input.member_id))?.status !== 'active') {
    const message = 'is not an active member of the account';
    throw invalidRequest('api_keys', `member_id ${message}`, [{ path: 'member_id', message }]);
  }
  const { key, token } = await issueKey(ctx, { name: input.name, scopes: input.scopes, expiresAt, memberId: input.member_id ?? null });
  return { api_key: apiKeyToApi(key), token };
}

export async function getApiKey(ctx: OperationContext, id: string): Promise<ApiKeyRecord> {
  const item = await getApiKeyItem(ctx.accountId, id);
  if (!item) throw notFound('api_keys', 'API key');
  return apiKeyToApi(item);
}

export async function listApiKeys(ctx: OperationContext, input: ApiKeyListInput): Promise<Page<ApiKeyRecord>> {
  const { after, next } = await cursorScope(ctx, 'api_keys', input.cursor, {});
  const items = await queryApiKeys(ctx.accountId, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return { items: page.map(apiKeyToApi), next_cursor: next(items.length > input.limit && last ? listPosition(last) : undefined) };
}

/** Revokes a key of the account (a revoked one is returned unchanged): its token stops working. */
export async function revokeApiKey(ctx: OperationContext, id: string): Promise<ApiKeyRecord> {
  const item = await revokeApiKeyItem(ctx.accountId, id, new Date().toISOString());
  if (!item) throw notFound('api_keys', 'API key');
  return apiKeyToApi(item);
}
