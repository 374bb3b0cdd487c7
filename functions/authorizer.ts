import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { type AuthorizerContext, bearerToken, resolveToken } from '../shared/auth/tokens.js';

type Result = APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext | Record<string, never>>;

/**
 * HTTP API Lambda authorizer (simple responses). The local server runs this same function.
 *
 * An unknown, revoked or expired token is let through with an EMPTY context instead of being
 * denied: API Gateway would answer a denial with its own `403 {"message":"Forbidden"}`, while the
 * operation's handler answers an empty context with the contract's `401 auth.unauthorized`.
 *
 * API Gateway caches this answer per Authorization header (lib/crm-stack.ts): the cache key is
 * the token itself, and the answer is the same for every route, so it grants nothing by itself —
 * the key's scopes travel in the context and every operation checks the scope it needs
 * (shared/http/operation.ts), whether the answer came from the cache or not. `expiresAt` lets the
 * operation refuse an expired key at once even from the cache; a revoked key stops within the
 * cache's 60 s.
 */
export const handler = async (event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>): Promise<Result> => {
  const header = event.headers?.authorization ?? event.headers?.Authorization;
  const token = bearerToken(header);
  const auth = token ? await resolveToken(token) : undefined;
  return { isAuthorized: true, context: auth ?? {} };
};
