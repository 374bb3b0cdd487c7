import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult, Context } from 'aws-lambda';
import { FUNCTIONS, type FunctionSpec } from '../functions/topology.js';
import type { AuthorizerContext } from '../shared/auth/tokens.js';
import { ApiError } from '../shared/errors.js';
import { type ApiEvent, type ApiResult, errorResponse, MAX_BODY_BYTES } from '../shared/http/operation.js';
import { loadHandler } from './handlers.js';

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

export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Reads at most `limit` bytes; undefined when the body is larger. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, result: ApiResult) {
  res.writeHead(result.statusCode ?? 200, { 'content-type': 'application/json', ...(result.headers as Record<string, string>) });
  res.end(result.body ?? '');
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
}

export interface ApiServerOptions {
  /** Called once per answered request. */
  onRequest?: (entry: RequestLog) => void;
  /** The functions it serves (default: the topology's). */
  functions?: readonly FunctionSpec[];
}

/** `POST contacts-create 200 12 ms (request 3b0c…)`. */
export const formatRequestLog = (e: RequestLog) => `${e.method} ${e.operation} ${e.status} ${e.ms} ms (request ${e.requestId})`;

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
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const name = /^\/api\/([^/]+)\/?$/.exec(url.pathname)?.[1];
    const op = name ? api.routes.get(name) : undefined;
    if (opts.onRequest) {
      const onRequest = opts.onRequest;
      res.once('finish', () => onRequest({ method, operation: op?.name ?? url.pathname, status: res.statusCode, ms: Math.round(performance.now() - started), requestId }));
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
        return send(res, await (await loadHandler<Fallback>(api.fallback.entry))({ rawPath: url.pathname, requestContext } as ApiEvent));
      }
      // Two Authorization headers: which one counts is ambiguous (Node keeps the first).
      if ((req.headersDistinct.authorization?.length ?? 0) > 1) {
        req.resume();
        return send(res, errorResponse(new ApiError('api.invalid_request', 'send exactly one Authorization header'), requestId));
      }
      const auth = await authorizeCached(api.authorizer, headers);
      if (!auth.isAuthorized || !('accountId' in auth.context)) {
        req.resume();
        return send(res, errorResponse(new ApiError('auth.unauthorized', 'missing, malformed, unknown or revoked access token'), requestId));
      }
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body === undefined) return send(res, errorResponse(new ApiError('api.payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`), requestId));
      const event = {
        version: '2.0',
        routeKey: requestContext.routeKey,
        rawPath: url.pathname,
        rawQueryString: url.search.slice(1),
        headers,
        requestContext: { ...requestContext, authorizer: { lambda: auth.context } },
        body,
        isBase64Encoded: false,
      } as unknown as ApiEvent;
      const handler = await loadHandler<Handler>(op.entry);
      send(res, await handler(event, lambdaContext(op.name)));
    } catch (error) {
      console.error(`local server error (request ${requestId})`, error);
      if (!res.headersSent) send(res, errorResponse(new ApiError('api.internal', 'internal server error'), requestId));
    }
  });
  server.on('clientError', answerClientError);
  return server;
}
