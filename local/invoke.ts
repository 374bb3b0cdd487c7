import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { FUNCTIONS } from '../functions/topology.js';
import type { ApiEvent, ApiResult, AuthContext } from '../shared/http/operation.js';
import { lambdaContext, loadHandler } from './handlers.js';

/** An API Gateway HTTP API v2 event as the authorizer-fronted route delivers it. */
export function apiEvent(op: string, body: unknown, auth?: AuthContext, headers: Record<string, string> = {}): ApiEvent {
  return {
    version: '2.0',
    routeKey: `POST /api/${op}`,
    rawPath: `/api/${op}`,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: `/api/${op}`, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'invoke' },
      requestId: randomUUID(),
      routeKey: `POST /api/${op}`,
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
      ...(auth ? { authorizer: { lambda: auth } } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    isBase64Encoded: false,
  } as unknown as ApiEvent;
}

type Handler = (e: ApiEvent, c: Context) => Promise<ApiResult>;

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: { ok: boolean; result?: T; error?: { code: string; message: string; details?: { path: string; message: string }[] } };
}

/** Each operation's `http` function of the topology. */
const OPERATION_FUNCTIONS = new Map(FUNCTIONS.flatMap((f) => (f.trigger.kind === 'http' ? [[f.trigger.operation, f] as const] : [])));

/** Invokes an operation's Lambda handler in-process (its `http` function of the topology). */
export async function invokeOperation<T = Record<string, unknown>>(op: string, body: unknown, auth?: AuthContext, headers?: Record<string, string>): Promise<Reply<T>> {
  const fn = OPERATION_FUNCTIONS.get(op);
  if (!fn) throw new Error(`no operation ${op}`);
  const res = await (await loadHandler<Handler>(fn.entry))(apiEvent(op, body, auth, headers), lambdaContext(op));
  return { status: res.statusCode ?? 200, body: JSON.parse(res.body ?? '{}') };
}
