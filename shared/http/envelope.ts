import type { APIGatewayProxyEventV2WithLambdaAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { AuthContext } from '../domain/context.js';
import type { ApiError } from '../errors.js';

/**
 * The response envelopes, apart from the operation pipeline (shared/http/operation.ts) so that
 * functions that only answer errors (the fallback route) do not bundle middy, the tracer and
 * the logger.
 */
/**
 * The authorizer's context as a handler receives it (shared/auth/tokens.ts `AuthorizerContext`:
 * scopes space-separated, `expiresAt` ISO). Tests that invoke a handler directly may pass an
 * AuthContext (scopes as an array, or none: a full-scope token).
 */
export type EventAuth = Omit<AuthContext, 'scopes'> & { scopes?: string | readonly string[]; expiresAt?: string };
export type ApiEvent = APIGatewayProxyEventV2WithLambdaAuthorizer<EventAuth>;
export type ApiResult = APIGatewayProxyStructuredResultV2;

const JSON_HEADERS = { 'content-type': 'application/json' };

export function jsonResponse(statusCode: number, body: unknown): ApiResult {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

/**
 * The contract's failure envelope. `requestId` is API Gateway's request id (the local server makes
 * one too): it is in every log line of the request and in the API access log, so a user's report
 * can be found.
 */
export function errorResponse(error: ApiError, requestId?: string): ApiResult {
  return jsonResponse(error.status, { ok: false, error: { ...error.toJSON(), ...(requestId ? { request_id: requestId } : {}) } });
}

/** API Gateway's request id of an event (undefined when absent or empty). */
export const requestIdOf = (event: Pick<ApiEvent, 'requestContext'> | undefined): string | undefined => event?.requestContext?.requestId || undefined;
