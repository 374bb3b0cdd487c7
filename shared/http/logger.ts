import { Logger } from '@aws-lambda-powertools/logger';
import type { ApiError } from '../errors.js';
import { API_ERROR_LOG_KEY } from '../observability/names.js';

/** Structured JSON logs (Powertools). Never pass secrets, tokens or request bodies to it. */
export const logger = new Logger({ serviceName: 'crm' });

/**
 * One log line per error envelope an API function answers, carrying API_ERROR_LOG_KEY (the code):
 * the `ApiErrors` metric, by code, is a metric filter on these lines (lib/function-group.ts).
 * A 5xx logs at ERROR with its cause; anything else at INFO (the level of every stage; a
 * stage set to WARN keeps only the 5xx lines, and the metric counts only those).
 */
export function logErrorAnswer(error: ApiError, requestId: string | undefined, cause?: unknown): void {
  const keys = { [API_ERROR_LOG_KEY]: error.code, status: error.status, ...(requestId ? { request_id: requestId } : {}) };
  if (error.status >= 500) logger.error('operation failed', { ...keys, error: cause });
  else logger.info('answered with an error', keys);
}
