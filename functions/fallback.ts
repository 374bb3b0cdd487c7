import { ApiError } from '../shared/errors.js';
import { type ApiEvent, type ApiResult, errorResponse, requestIdOf } from '../shared/http/envelope.js';
import { countMetric, METRIC } from '../shared/observability/metrics.js';
import { operationByName } from './operations.js';

/** The `$default` route: unknown operations are 404, other methods on known ones 405. */
export const handler = async (event: Pick<ApiEvent, 'rawPath' | 'requestContext'>): Promise<ApiResult> => {
  const match = /^\/api\/([^/]+)\/?$/.exec(event.rawPath ?? '');
  const known = match ? operationByName.has(match[1]!) : false;
  const method = event.requestContext?.http?.method ?? 'GET';
  const error = known && method !== 'POST' ? new ApiError('api.method_not_allowed', 'only POST is allowed') : new ApiError('api.unknown_operation', 'unknown operation');
  countMetric(METRIC.apiErrors, 1, { code: error.code });
  return errorResponse(error, requestIdOf(event));
};
