import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { invokeOperation, type Reply } from '../../local/invoke.js';
import { issueToken } from '../../shared/auth/tokens.js';
import type { AuthContext } from '../../shared/http/operation.js';
import { createApiServer } from '../../local/server.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import { startTestStream } from './stream.js';

export const newAccount = (): AuthContext => ({ accountId: randomUUID(), userId: randomUUID() });

export { apiEvent } from '../../local/invoke.js';
export type { Reply } from '../../local/invoke.js';

/** Invokes an operation's Lambda handler directly (the registry entry's module). */
export const invoke = invokeOperation;

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

/**
 * The record changes' path on this test file's table, as `npm start` runs it: the stream function
 * routing to the changes queue and the changes worker (test/helpers/stream.ts).
 */
export function startTestStreamWorker(): Promise<StreamPoller> {
  return startTestStream();
}
