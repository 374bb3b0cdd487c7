import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type middy from '@middy/core';
import type { ApiError } from '../errors.js';
import { API_ERROR_LOG_KEY } from '../observability/names.js';

const base = new Logger({ serviceName: 'crm' });

/** The log scope of one invocation: the logger its lines go through (with its keys, once `logKeys` set them). */
interface LogScope {
  logger: Logger;
}
const invocation = new AsyncLocalStorage<LogScope>();

/**
 * Structured JSON logs (Powertools). Never pass secrets, tokens or request bodies to it. Inside an
 * invocation's log scope (`ownLogScope`) it is that invocation's logger, so its keys (`function`,
 * `operation`, `request_id`) are its own: locally several functions run at once in one thread, and
 * keys appended to one shared logger leaked from one function's lines into another's.
 */
export const logger: Logger = new Proxy(base, {
  get(target, prop) {
    const current = invocation.getStore()?.logger ?? target;
    const value = Reflect.get(current, prop, current) as unknown;
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current) : value;
  },
});

/**
 * Runs each call of `handler` in a log scope of its own, where `logKeys` puts the invocation's
 * keys: they are on every line the invocation logs, however invocations interleave, and on no
 * line outside it. (A middleware cannot open the scope: middy calls it, it does not wrap the rest.)
 */
export const ownLogScope =
  <E, C, R>(handler: (event: E, context: C) => Promise<R>) =>
  (event: E, context: C): Promise<R> =>
    invocation.run({ logger: base }, () => handler(event, context));

/**
 * Middleware (`before`): from here on, every line of the invocation carries `keysOf(request)`: the
 * function or operation, and the request id. The one log-key step of both pipelines (operation.ts,
 * instrumented.ts), inside the scope `ownLogScope` opened; the keys go with the scope.
 */
export const logKeys = <E, R>(keysOf: (request: middy.Request<E, R>) => Record<string, string | undefined>): middy.MiddlewareObj<E, R> => ({
  before: (request) => {
    const scope = invocation.getStore();
    if (!scope) return;
    const keys = Object.fromEntries(Object.entries(keysOf(request)).filter((e): e is [string, string] => e[1] !== undefined));
    scope.logger = base.createChild({ persistentKeys: keys });
  },
});

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
