/**
 * A function's handler, loaded from its topology entry (`functions/<entry>`, exporting `handler`)
 * as Lambda loads its bundle: once per entry, on first use. It runs as its function of the
 * topology (local/iam.ts): every AWS SDK call it makes is checked against that function's policy.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { FUNCTIONS, type FunctionSpec } from '../functions/topology.js';
import { installFairGate } from './fair-gate.js';
import { asFunction, installIamEnforcement } from './iam.js';
import { installWriteSignal } from './write-signal.js';

installIamEnforcement();
installFairGate();
// Writes wake the local stream poller (local/stream-poller.ts), in whichever thread it runs.
installWriteSignal();

const loaded = new Map<string, Promise<unknown>>();

export function loadHandler<H = (event: never) => Promise<unknown>>(entry: string): Promise<H> {
  let p = loaded.get(entry);
  if (!p) {
    const spec = FUNCTIONS.find((f) => f.entry === entry);
    p = import(new URL(`../functions/${entry.replace(/\.ts$/, '.js')}`, import.meta.url).href).then((m: { handler?: unknown }) => {
      if (typeof m.handler !== 'function') throw new Error(`functions/${entry} exports no handler`);
      const handler = m.handler as (event: unknown, context?: Context) => Promise<unknown>;
      return spec ? asFunction(spec, API_KINDS.has(spec.trigger.kind) ? handler : withTimeLimit(spec, handler)) : handler;
    });
    loaded.set(entry, p);
  }
  return p as Promise<H>;
}

/** The API's functions: their time limit is the server's (API Gateway's 29 s, local/server.ts). */
const API_KINDS = new Set(['http', 'authorizer', 'http-default']);

/** Lambda's answer to a function that runs past its time-out. */
export class FunctionTimedOut extends Error {
  constructor(name: string, seconds: number) {
    super(`${name}: Task timed out after ${seconds.toFixed(2)} seconds`);
    this.name = 'FunctionTimedOut';
  }
}

/**
 * Lambda's time limit, locally: a background function gets a context whose remaining time counts
 * down from its `timeoutSeconds`, and an invocation still running then fails as Lambda's would
 * (its messages or stream records are retried), so nothing waits on it for good. What the
 * abandoned run still does is bounded by its own calls' time-outs; the work is idempotent.
 */
function withTimeLimit(spec: FunctionSpec, handler: (event: unknown, context?: Context) => Promise<unknown>) {
  return async (event: unknown, context?: Context): Promise<unknown> => {
    const limitMs = spec.timeoutSeconds * 1000;
    const deadline = Date.now() + limitMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new FunctionTimedOut(spec.name, spec.timeoutSeconds)), limitMs);
    });
    try {
      return await Promise.race([handler(event, context ?? lambdaContext(spec.name, deadline)), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * A Lambda context for a local invocation: its remaining time counts down to `deadline` (a
 * background function's time-out; for the API, API Gateway's 29 s from now).
 */
export function lambdaContext(functionName: string, deadline = Date.now() + 29_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
