import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type { ApiError } from '../errors.js';
import { API_ERROR_LOG_KEY } from '../observability/names.js';

const base = new Logger({ serviceName: 'crm' });
/** The logger of the invocation in progress (its keys), where one is (`withLogKeys`). */
const invocation = new AsyncLocalStorage<Logger>();

/**
 * Structured JSON logs (Powertools). Never pass secrets, tokens or request bodies to it. Inside
 * `withLogKeys` it is that invocation's logger, so its keys (`function`, `request_id`…) are its
 * own: locally several functions run at once in one thread, and keys appended to one shared
 * logger leaked from one function's lines into another's.
 */
export const logger: Logger = new Proxy(base, {
  get(target, prop) {
    const current = invocation.getStore() ?? target;
    const value = Reflect.get(current, prop, current) as unknown;
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current) : value;
  },
});

/** Runs `fn` with a logger of its own carrying `keys` on every line it logs (and only on those). */
export function withLogKeys<T>(keys: Record<string, string>, fn: () => T): T {
  return invocation.run(base.createChild({ persistentKeys: keys }), fn);
}

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
