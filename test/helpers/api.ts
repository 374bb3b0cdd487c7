import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operationByName } from '../../functions/operations.js';
import { issueToken } from '../../shared/auth/tokens.js';
import type { ApiEvent, ApiResult, AuthContext } from '../../shared/http/operation.js';
import { createApiServer, lambdaContext } from '../../local/server.js';
import { type StreamPoller, startStreamPoller } from '../../local/stream-poller.js';
import { handler as streamHandler } from '../../functions/stream/handler.js';

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: { ok: boolean; result?: T; error?: { code: string; message: string; details?: { path: string; message: string }[] } };
}

export const newAccount = (): AuthContext => ({ accountId: randomUUID(), userId: randomUUID() });

/** An API Gateway HTTP API v2 event as the authorizer-fronted route delivers it. */
export function apiEvent(op: string, body: unknown, auth?: AuthContext, headers: Record<string, string> = {}): ApiEvent {
  return {
    version: '2.0',
    routeKey: `POST /api/${op}`,
    rawPath: `/api/${op}`,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: `/api/${op}`, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
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

const handlers = new Map<string, Promise<(e: ApiEvent, c: unknown) => Promise<ApiResult>>>();

/** Invokes an operation's Lambda handler directly (the registry entry's module). */
export async function invoke<T = Record<string, unknown>>(op: string, body: unknown, auth?: AuthContext, headers?: Record<string, string>): Promise<Reply<T>> {
  const entry = operationByName.get(op);
  if (!entry) throw new Error(`no operation ${op}`);
  let h = handlers.get(op);
  if (!h) {
    h = import(`../../functions/${entry.entry.replace(/\.ts$/, '.js')}`).then((m) => m.handler);
    handlers.set(op, h);
  }
  const res = await (await h)(apiEvent(op, body, auth, headers), lambdaContext(op));
  return { status: res.statusCode ?? 200, body: JSON.parse(res.body ?? '{}') };
}

/** Invokes and expects success; returns the result. */
export async function ok<T = Record<string, unknown>>(op: string, body: unknown, auth: AuthContext): Promise<T> {
  const r = await invoke<T>(op, body, auth);
  if (r.status !== 200 || !r.body.ok) throw new Error(`${op} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result as T;
}

export interface TestServer {
  baseUrl: string;
  token: string;
  auth: AuthContext;
  call<T = Record<string, unknown>>(op: string, body?: unknown, opts?: { token?: string | null; method?: string; rawBody?: string; headers?: Record<string, string> }): Promise<Reply<T>>;
  close(): Promise<void>;
}

/** The local HTTP server (authorizer + handlers) on a random port, with a fresh account and token. */
export async function startServer(): Promise<TestServer> {
  const server: Server = createApiServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const auth = newAccount();
  const token = await issueToken(auth);
  return {
    baseUrl,
    token,
    auth,
    async call(op, body = {}, opts = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
      const t = opts.token === undefined ? token : opts.token;
      if (t) headers.authorization = `Bearer ${t}`;
      const res = await fetch(`${baseUrl}/api/${op}`, { method: opts.method ?? 'POST', headers, body: (opts.method ?? 'POST') === 'GET' ? undefined : opts.rawBody ?? JSON.stringify(body) });
      return { status: res.status, body: await res.json() } as never;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** The stream worker on this test file's table. */
export function startTestStreamWorker(): Promise<StreamPoller> {
  return startStreamPoller({ endpoint: process.env.DYNAMODB_ENDPOINT!, tableName: process.env.TABLE_NAME!, handler: streamHandler, intervalMs: 25, retryDelayMs: 100 });
}
