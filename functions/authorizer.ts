import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { bearerToken, resolveToken } from '../shared/auth/tokens.js';
import type { AuthContext } from '../shared/http/operation.js';

type Result = APIGatewaySimpleAuthorizerWithContextResult<AuthContext | Record<string, never>>;

/**
 * HTTP API Lambda authorizer (simple responses). The local server runs this same function.
 *
 * An unknown or revoked token is let through with an EMPTY context instead of being denied:
 * API Gateway would answer a denial with its own `403 {"message":"Forbidden"}`, while the
 * operation's handler answers an empty context with the contract's `401 auth.unauthorized`.
 */
export const handler = async (event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>): Promise<Result> => {
  const header = event.headers?.authorization ?? event.headers?.Authorization;
  const token = bearerToken(header);
  const auth = token ? await resolveToken(token) : undefined;
  return { isAuthorized: true, context: auth ?? {} };
};
