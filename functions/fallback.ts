import { ApiError } from '../shared/errors.js';
import { type ApiEvent, type ApiResult, errorResponse, requestIdOf } from '../shared/http/envelope.js';
import { logErrorAnswer } from '../shared/http/logger.js';
import { closestName } from '../shared/http/closest.js';
import { OPERATION_NAMES } from './operation-names.js';

/**
 * The `$default` route: unknown operations are 404 (naming the closest operation when one is
 * near, and pointing to `/docs`: contract §1), other methods on known ones 405.
 */
export const handler = async (event: Pick<ApiEvent, 'rawPath' | 'requestContext'>): Promise<ApiResult> => {
  const match = /^\/api\/([^/]+)\/?$/.exec(event.rawPath ?? '');
  const known = match ? OPERATION_NAMES.has(match[1]!) : false;
  const method = event.requestContext?.http?.method ?? 'GET';
  const error = known && method !== 'POST' ? new ApiError('api.method_not_allowed', 'only POST is allowed') : new ApiError('api.unknown_operation', unknownMessage(match?.[1]));
  logErrorAnswer(error, requestIdOf(event));
  return errorResponse(error, requestIdOf(event));
};

function unknownMessage(name: string | undefined): string {
  const near = name ? closestName(decodeURIComponentSafe(name).toLowerCase(), [...OPERATION_NAMES]) : undefined;
  return `unknown operation${near ? `: did you mean ${near}?` : ''} Every operation is POST /api/<operation>; the list is at /docs`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
