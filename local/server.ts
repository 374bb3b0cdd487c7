import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult, Context } from 'aws-lambda';
import { FUNCTIONS, type FunctionSpec } from '../functions/topology.js';
import type { AuthorizerContext } from '../shared/auth/tokens.js';
import { ApiError } from '../shared/errors.js';
import { type ApiEvent, type ApiResult, errorResponse, MAX_BODY_BYTES } from '../shared/http/operation.js';
import { lambdaContext, loadHandler } from './handlers.js';

type Handler = (event: ApiEvent, context: Context) => Promise<ApiResult>;
type AuthResult = APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext | Record<string, never>>;
type Authorizer = (event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>) => Promise<AuthResult>;
type Fallback = (event: Pick<ApiEvent, 'rawPath' | 'requestContext'>) => Promise<ApiResult>;

/** The API's functions of the topology: the routes (`http`), the authorizer and the `$default` route. */
function apiOf(functions: readonly FunctionSpec[]) {
  const one = (kind: 'authorizer' | 'http-default') => {
    const found = functions.filter((f) => f.trigger.kind === kind);
    if (found.length !== 1) throw new Error(`the topology must have one ${kind} function (has ${found.length})`);
    return found[0]!;
  };
  const routes = new Map<string, FunctionSpec>();
  for (const f of functions) if (f.trigger.kind === 'http') routes.set(f.trigger.operation, f);
  return { routes, authorizer: one('authorizer'), fallback: one('http-default') };
}

/**
 * Like API Gateway's authorizer cache (keyed by the Authorization header), when
 * CRM_AUTH_CACHE_SECONDS > 0; off by default locally so a revoked token stops at once.
 */
const authCache = new Map<string, { at: number; result: AuthResult }>();
async function authorizeCached(authorizer: FunctionSpec, headers: Record<string, string>): Promise<AuthResult> {
  const ttl = Number(process.env.CRM_AUTH_CACHE_SECONDS ?? 0) * 1000;
  const key = headers.authorization ?? '';
  const hit = ttl > 0 ? authCache.get(key) : undefined;
  if (hit && Date.now() - hit.at < ttl) return hit.result;
  const result = await (await loadHandler<Authorizer>(authorizer.entry))({ headers });
  if (ttl > 0 && 'accountId' in result.context) authCache.set(key, { at: Date.now(), result });
  return result;
}

/**
 * How much of an oversized body is read and dropped after the limit so that the client, which
 * sends the whole body before it reads the answer, gets the 413 on a connection that stays usable.
 * Past it the answer closes the connection (lingering: see lingerThenClose).
 */
export const DRAIN_BYTES = 16 * 1024 * 1024;
/** How long a connection closed after a 413 still takes (and drops) the client's bytes. */
const LINGER_MS = 3000;

type BodyRead = { body: string } | { tooLarge: true; drained: boolean } | { aborted: true };

/**
 * The body, when it has at most `limit` bytes. A larger one is read to its end and dropped (up to
 * DRAIN_BYTES past the limit): stopping to read (or destroying the request, as leaving a
 * `for await` over it does) resets the connection while the client is still sending, and the
 * client then never sees the 413.
 */
function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  // Gone while the authorizer ran: its close has been emitted already.
  if (req.destroyed) return Promise.resolve({ aborted: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (read: BodyRead) => {
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > limit + DRAIN_BYTES) settle({ tooLarge: true, drained: false });
    };
    const onEnd = () => settle(size > limit ? { tooLarge: true, drained: true } : { body: Buffer.concat(chunks).toString('utf8') });
    const onClose = () => settle({ aborted: true });
    req.on('data', onData).once('end', onEnd).once('close', onClose).once('error', onClose);
  });
}

/**
 * After this response, closes the connection the way a client can read the answer: the answer
 * says `Connection: close`; once it is written, only the sending side is shut (FIN) and what the
 * client still sends is read and dropped until it closes or LINGER_MS pass. Closing at once with
 * unread bytes would reset the connection, and a reset can discard the answer at the client.
 */
function lingerThenClose(res: ServerResponse): void {
  res.setHeader('connection', 'close');
  const socket = res.socket;
  if (!socket) return;
  // Node ends a `Connection: close` response with socket.destroySoon(), which destroys the socket
  // as soon as the answer is flushed: replaced, for this socket, by a half-close and a delay.
  (socket as unknown as { destroySoon: () => void }).destroySoon = () => {
    socket.end();
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy()).once('close', () => clearTimeout(timer));
  };
}

/**
 * How long an idle keep-alive connection stays open, and the shorter time its answers announce
 * (`Keep-Alive: timeout=60`). A client that reuses a connection just as the server closes it gets
 * a reset and no answer, with nothing logged: clients that follow the announcement (undici, Node's
 * agent with a timeout) close theirs first, and Node's default agent, which keeps sockets until
 * the server closes them, meets the race only after a minute of idleness, not after Node's 5 s.
 */
export const KEEP_ALIVE_MS = 65_000;
const KEEP_ALIVE_ANNOUNCED = 'timeout=60';

/**
 * Connection headers of an answer: keep-alive with its announced timeout, unless the server is
 * closing (then the connection closes after the answer, so that `close()` does not wait for it to
 * idle out) or the connection is to close anyway.
 */
function connectionHeaders(res: ServerResponse, server: Server): void {
  if (res.headersSent) return;
  if (!server.listening) res.setHeader('connection', 'close');
  if (res.getHeader('connection') === 'close') res.removeHeader('keep-alive');
  else res.setHeader('keep-alive', KEEP_ALIVE_ANNOUNCED);
}

function send(res: ServerResponse, result: ApiResult) {
  res.writeHead(result.statusCode ?? 200, { 'content-type': 'application/json', ...(result.headers as Record<string, string>) });
  res.end(result.body ?? '');
}

/**
 * The request's URL. A target Node's parser lets through but URL refuses (`//`, `//a:b:c`) is a
 * path of its own, unknown to the API (a throw here, outside the handler's try, would leave the
 * request unanswered).
 */
function requestUrl(target: string): URL {
  try {
    return new URL(target, 'http://localhost');
  } catch {
    return new URL(`/${encodeURIComponent(target)}`, 'http://localhost');
  }
}

/** Extra GET routes (documentation) that other modules may register. */
export type StaticRoute = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/** One answered request, for `npm start`'s one line per request. */
export interface RequestLog {
  method: string;
  /** The operation's name, or the path when it is not an operation. */
  operation: string;
  status: number;
  ms: number;
  requestId: string;
  /** The client closed the connection before the answer was written (`status` is then 499). */
  unanswered?: true;
}

export interface ApiServerOptions {
  /** Called once per answered request. */
  onRequest?: (entry: RequestLog) => void;
  /** The functions it serves (default: the topology's). */
  functions?: readonly FunctionSpec[];
}

/** `POST contacts-create 200 12 ms (request 3b0c…)`. */
export const formatRequestLog = (e: RequestLog) =>
  `${e.method} ${e.operation} ${e.status} ${e.ms} ms (request ${e.requestId})${e.unanswered ? ': the client closed the connection before the answer' : ''}`;

/** Request headers up to this size reach the API (a 100 KB token is then a 401, not a bare 431). */
export const MAX_HEADER_BYTES = 128 * 1024;

/**
 * A request Node's parser refuses before any handler runs (headers over MAX_HEADER_BYTES, a NUL
 * or another invalid character in a header, a broken request line) still gets the contract's
 * envelope: 400 `api.invalid_request`.
 */
function answerClientError(error: Error & { code?: string }, socket: import('node:stream').Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const message = error.code === 'HPE_HEADER_OVERFLOW' ? `request headers exceed ${MAX_HEADER_BYTES} bytes` : 'malformed HTTP request (invalid header name or value, e.g. a NUL or control character)';
  const result = errorResponse(new ApiError('api.invalid_request', message), requestId);
  const body = result.body ?? '';
  socket.end(`HTTP/1.1 ${result.statusCode} Bad Request\r\ncontent-type: application/json\r\napigw-requestid: ${requestId}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * The local API Gateway, a loop over the topology's API functions: `POST /api/<operation>` of each
 * `http` function runs the `authorizer` function, then the operation's handler with an HTTP API v2
 * event; everything else goes to the `http-default` function. Handlers load from their entries.
 */
export function createApiServer(extraRoutes: StaticRoute[] = [], opts: ApiServerOptions = {}): Server {
  const api = apiOf(opts.functions ?? FUNCTIONS);
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, async (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    // Like API Gateway's `apigw-requestid`: the id that error bodies and log lines carry.
    res.setHeader('apigw-requestid', requestId);
    connectionHeaders(res, server);
    const answer = (result: ApiResult) => {
      connectionHeaders(res, server);
      send(res, result);
    };
    const url = requestUrl(req.url ?? '/');
    const method = req.method ?? 'GET';
    const name = /^\/api\/([^/]+)\/?$/.exec(url.pathname)?.[1];
    const op = name ? api.routes.get(name) : undefined;
    if (opts.onRequest) {
      const onRequest = opts.onRequest;
      const entry = () => ({ method, operation: op?.name ?? url.pathname, ms: Math.round(performance.now() - started), requestId });
      res.once('finish', () => onRequest({ ...entry(), status: res.statusCode }));
      // A request that got no answer is logged too (as nginx does, 499).
      res.once('close', () => {
        if (!res.writableFinished) onRequest({ ...entry(), status: 499, unanswered: true });
      });
    }
    try {
      for (const route of extraRoutes) if (await route(req, res)) return;
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(',') : v])) as Record<string, string>;
      const requestContext = {
        accountId: 'local',
        apiId: 'local',
        domainName: headers.host ?? 'localhost',
        domainPrefix: 'localhost',
        http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
        requestId,
        routeKey: op ? `POST /api/${op.name}` : '$default',
        stage: '$default',
        time: new Date().toUTCString(),
        timeEpoch: Date.now(),
      };
      if (!op || method !== 'POST') {
        req.resume();
        return answer(await (await loadHandler<Fallback>(api.fallback.entry))({ rawPath: url.pathname, requestContext } as ApiEvent));
      }
      // Two Authorization headers: which one counts is ambiguous (Node keeps the first).
      if ((req.headersDistinct.authorization?.length ?? 0) > 1) {
        req.resume();
        return answer(errorResponse(new ApiError('api.invalid_request', 'send exactly one Authorization header'), requestId));
      }
      const auth = await authorizeCached(api.authorizer, headers);
      if (!auth.isAuthorized || !('accountId' in auth.context)) {
        req.resume();
        return answer(errorResponse(new ApiError('auth.unauthorized', 'missing, malformed, unknown or revoked access token'), requestId));
      }
      const read = await readBody(req, MAX_BODY_BYTES);
      // The client is gone: nobody to answer.
      if ('aborted' in read) return;
      if ('tooLarge' in read) {
        if (!read.drained) lingerThenClose(res);
        return answer(errorResponse(new ApiError('api.payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`), requestId));
      }
      const event = {
        version: '2.0',
        routeKey: requestContext.routeKey,
        rawPath: url.pathname,
        rawQueryString: url.search.slice(1),
        headers,
        requestContext: { ...requestContext, authorizer: { lambda: auth.context } },
        body: read.body,
        isBase64Encoded: false,
      } as unknown as ApiEvent;
      const handler = await loadHandler<Handler>(op.entry);
      answer(await handler(event, lambdaContext(op.name)));
    } catch (error) {
      console.error(`local server error (request ${requestId})`, error);
      if (!res.headersSent) answer(errorResponse(new ApiError('api.internal', 'internal server error'), requestId));
    }
  });
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}
