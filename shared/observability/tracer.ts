import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type middy from '@middy/core';

/**
 * X-Ray tracing (Powertools). Active only inside Lambda with tracing on (the stack turns it on
 * for every function); locally and in tests it does nothing. Outgoing HTTPS calls (DynamoDB, SQS,
 * KMS, webhook posts) become subsegments. Responses are not captured: they hold customer data.
 */
export const tracer = new Tracer({ serviceName: 'crm', captureHTTPsRequests: true });

/** The middy middleware that opens the handler's subsegment and closes it with the outcome. */
export const traced = (): middy.MiddlewareObj => captureLambdaHandler(tracer, { captureResponse: false });

/** Annotates the current trace (searchable in X-Ray), when tracing is on. */
export function annotate(key: string, value: string): void {
  if (tracer.isTracingEnabled()) tracer.putAnnotation(key, value);
}
