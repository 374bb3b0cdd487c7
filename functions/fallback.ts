import { ApiError } from '../shared/errors.js';
import { type ApiEvent, type ApiResult, errorResponse, requestIdOf } from '../shared/http/envelope.js';
import { operationByName } from './operations.js';

/** The `$default` route: unknown operations are 404, other methods on known ones 405. */
export const handler = async (event: Pick<ApiEvent, 'rawPath' | 'requestContext'>): Promise<ApiResult> => {
  const match = /^\/api\/([^/]+)\/?$/.exec(event.rawPath ?? '');
  const known = match ? operationByName.has(match[1]!) : false;
  const method = event.requestContext?.http?.method ?? 'GET';
  const requestId = requestIdOf(event);
  if (known && method !== 'POST') return errorResponse(new ApiError('api.method_not_allowed', 'only POST is allowed'), requestId);
  return errorResponse(new ApiError('api.unknown_operation', 'unknown operation'), requestId);
};
