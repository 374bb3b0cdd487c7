import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { annotate, traced } from '../observability/tracer.js';
import { withLogKeys } from './logger.js';

/**
 * Wraps a handler of a function that is not an API operation (stream consumer, delivery worker,
 * sweeper, import worker, inbound mail…) with what operations get from `operation()`: the
 * Powertools Tracer subsegment (annotated with `function`) and the Lambda request id on every
 * log line (`request_id`). Locally and in tests the tracer is off and the handler runs as is;
 * the context may be absent (the local workers call handlers with the event only).
 *
 *   export const handler = instrumented('delivery', async (event: SQSEvent) => { … });
 */
export function instrumented<E, R>(name: string, handler: (event: E, context: Context) => Promise<R>): (event: E, context?: Context) => Promise<R> {
  const wrapped = middy<E, R, Error, Context>()
    .use(traced() as middy.MiddlewareObj<E, R, Error, Context>)
    .use({
      before: async () => {
        annotate('function', name);
      },
    })
    .handler(handler);
  // Every line the invocation logs names its function (and request), and no other function's line does.
  return (event, context) => {
    const requestId = context?.awsRequestId;
    return withLogKeys({ function: name, ...(requestId ? { request_id: requestId } : {}) }, () => wrapped(event, context ?? ({} as Context)));
  };
}
