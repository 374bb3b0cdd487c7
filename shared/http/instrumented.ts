import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { annotate, traced } from '../observability/tracer.js';
import { logKeys, ownLogScope } from './logger.js';

/**
 * Wraps a handler of a function that is not an API operation (stream consumer, delivery worker,
 * sweeper, import worker, inbound mail…) in a middy pipeline of its own: the Powertools Tracer
 * subsegment (annotated with `function`; API operations have none, their traces are API
 * Gateway's and the SDK calls'), and the log keys of operation()'s pipeline, by the same
 * middleware (`logKeys`, logger.ts): the function and the Lambda request id on every line the
 * invocation logs, and on no other invocation's. Locally and in tests the tracer is off; the
 * context may be absent (the local workers call handlers with the event only).
 *
 *   export const handler = instrumented('delivery', async (event: SQSEvent) => { … });
 */
export function instrumented<E, R>(name: string, handler: (event: E, context: Context) => Promise<R>): (event: E, context?: Context) => Promise<R> {
  const pipeline = middy<E, R, Error, Context>()
    .use(logKeys<E, R>((request) => ({ function: name, request_id: request.context.awsRequestId || undefined })))
    .use(traced() as middy.MiddlewareObj<E, R, Error, Context>)
    .use({
      before: () => {
        annotate('function', name);
      },
    })
    .handler(handler);
  const scoped = ownLogScope((event: E, context: Context) => pipeline(event, context));
  return (event, context) => scoped(event, context ?? ({} as Context));
}
