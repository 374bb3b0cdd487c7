import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { ApiError, type Family, forbidden, internal, invalidRequest, unauthorized } from '../errors.js';
import type { AuthContext, OperationContext } from '../domain/context.js';
import { covers, requiredScope, type ScopeAccess, scopesFromContext } from '../auth/scopes.js';
import { recordKeyUse } from '../domain/key-use.js';
import { consumeRateLimit, knownOverLimit, type RateLimitDecision, rateLimitHeaders } from '../domain/rate-limit.js';
import { type ApiEvent, type ApiResult, errorResponse, jsonResponse, requestIdOf } from './envelope.js';
import { logErrorAnswer, logger } from './logger.js';

export type { AuthContext, OperationContext };


export type { ApiEvent, ApiResult };
export { errorResponse, jsonResponse, requestIdOf };


export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Wraps a run: the idempotency of an operation declared `idempotent` (shared/http/idempotency.ts
 * `idempotencyOf`), set by the handler builders from the declaration, never by a handler file. Only
 * the builders of idempotent operations import it, so other functions' bundles do not carry it.
 */
export type RunWrapper = <R>(call: { ctx: OperationContext; family: Family; body: Record<string, unknown>; lambdaContext?: Context }, run: () => Promise<R>) => Promise<R>;

export interface OperationSpec<I, R> {
  name: string;
  family: Family;
  /** The declaration's `access`: the scope it needs (`<family>:<access>`), and whether it waits for the limiter. */
  access: ScopeAccess;
  /** Optional wrapper around `run` (the idempotency of an operation declared `idempotent`). */
  wrap?: RunWrapper;
  /** Validates the JSON object body into the operation's input; throws ApiError. */
  parse: (body: Record<string, unknown>) => I;
  run: (input: I, ctx: OperationContext) => Promise<R>;
}

/** Maps anything thrown to the contract's envelope; unexpected errors become `<family>.internal`. */
export function toApiError(error: unknown, family: Family): ApiError {
  if (error instanceof ApiError) return error;
  return internal(family, error);
}

/**
 * The caller, from the authorizer's context. An expired key is refused here too, so a decision
 * API Gateway cached before the expiry does not outlive it.
 */
function authFrom(event: ApiEvent, now = Date.now()): AuthContext {
  const auth = event.requestContext?.authorizer?.lambda;
  if (!auth || typeof auth.accountId !== 'string' || typeof auth.userId !== 'string') throw unauthorized();
  if (typeof auth.expiresAt === 'string' && Date.parse(auth.expiresAt) <= now) throw unauthorized();
  return {
    accountId: auth.accountId,
    userId: auth.userId,
    ...(typeof auth.keyId === 'string' ? { keyId: auth.keyId } : {}),
    scopes: scopesFromContext(auth.scopes),
  };
}

/** The rate-limit decision of each request in flight, for the headers of its answer (success or error). */
const rateLimits = new WeakMap<ApiEvent, RateLimitDecision>();

/** `RateLimit-*` (and on 429 `Retry-After`) on every answer of a request the limiter counted. */
const rateLimitAnswer = (): middy.MiddlewareObj<ApiEvent, ApiResult> => {
  const add = async (request: middy.Request<ApiEvent, ApiResult>) => {
    const decision = rateLimits.get(request.event);
    if (decision && request.response) request.response.headers = { ...request.response.headers, ...rateLimitHeaders(decision) };
  };
  return { after: add, onError: add };
};

/**
 * The one place access is enforced, for every operation (contract §14): the key (401), the scope
 * the operation needs (403, from its declaration: family and name, shared/auth/scopes.ts), the
 * account's rate limit (429). Returns the caller and `settle`, which resolves once the limiter
 * has counted the call and throws 429 when it was over the limit.
 *
 * A write waits for the limiter before anything else (a refused call changes nothing); a read
 * runs beside it and its answer is replaced by the 429 when the limiter refuses, so a read pays
 * the limiter's write in parallel, not in series (docs/performance.md, "Rate limiting").
 */
function admit(event: ApiEvent): { auth: AuthContext; settle: () => Promise<void> } {
  const auth = authFrom(event);
  const counted = Promise.all([consumeRateLimit(auth.accountId), recordKeyUse(auth)]).then(([decision]) => {
    if (decision) rateLimits.set(event, decision);
    return decision;
  });
  // Settled below on every path; until then a failure must not count as unhandled.
  counted.catch(() => undefined);
  const settle = async () => {
    const decision = await counted;
    if (decision && !decision.allowed) {
      throw new ApiError('api.rate_limited', `this account is over its rate limit (${decision.limit} requests at once): retry after ${decision.retryAfter} s`);
    }
  };
  return { auth, settle };
}

/**
 * How deep a body's objects and arrays may nest (the body itself is level 1). Far above anything
 * an operation takes (a record nests about 3 levels, a filter's groups 4), and far below what
 * would overflow the stack of code that walks a value recursively (e.g. key sorting).
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether the JSON text nests objects and arrays deeper than `max`: one linear scan of `[`/`{`
 * against `]`/`}` outside strings, no recursion (the text need not be valid JSON).
 */
export function nestsDeeperThan(raw: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote (one not escaped by an odd run of backslashes).
      let end = raw.indexOf('"', i + 1);
      while (end > 0) {
        let backslashes = 0;
        while (raw.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
        end = raw.indexOf('"', end + 1);
      }
      if (end < 0) return false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

export function readJsonObject(event: ApiEvent, family: Family): Record<string, unknown> {
  const raw = event.body === undefined || event.body === null ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new ApiError('api.payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`);
  if (raw.trim() === '') return {};
  // Before anything (JSON.parse included) walks it.
  if (nestsDeeperThan(raw, MAX_BODY_DEPTH)) throw invalidRequest(family, `request body nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidRequest(family, 'request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest(family, 'request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Error middleware: the one place where errors become responses (and their log line, which the ApiErrors metric counts). */
const errorEnvelope = (family: Family): middy.MiddlewareObj<ApiEvent, ApiResult> => ({
  onError: async (request) => {
    const apiError = toApiError(request.error, family);
    const requestId = requestIdOf(request.event);
    logErrorAnswer(apiError, requestId, apiError.cause ?? request.error);
    request.response = errorResponse(apiError, requestId);
  },
});

/** Every log line of the request carries its request id and operation. */
const requestKeys = (name: string): middy.MiddlewareObj<ApiEvent, ApiResult> => {
  const clear = async () => {
    logger.removeKeys(['request_id', 'operation']);
  };
  return {
    before: async (request) => {
      const requestId = requestIdOf(request.event);
      logger.appendKeys({ operation: name, ...(requestId ? { request_id: requestId } : {}) });
    },
    after: clear,
    onError: clear,
  };
};

/**
 * Builds a Lambda handler for one operation: auth, scope, rate limit → body → validate → run → envelope.
 * The same function serves API Gateway and the local HTTP server.
 */
export function operation<I, R>(spec: OperationSpec<I, R>) {
  return middy<ApiEvent, ApiResult, Error, Context>()
    .use(requestKeys(spec.name))
    .use(rateLimitAnswer())
    .use(errorEnvelope(spec.family))
    .handler(async (event, context) => {
      if (event.requestContext?.http?.method && event.requestContext.http.method !== 'POST') {
        throw new ApiError('api.method_not_allowed', 'only POST is allowed');
      }
      const { auth, settle } = admit(event);
      const scope = requiredScope(spec);
      if (!covers(auth.scopes ?? [], scope)) {
        await settle();
        throw forbidden(scope);
      }
      if (spec.access === 'write' || knownOverLimit(auth.accountId)) await settle();
      let result: unknown;
      try {
        const body = readJsonObject(event, spec.family);
        const input = spec.parse(body);
        const ctx: OperationContext = {
          ...auth,
          operation: spec.name,
          headers: Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
        };
        const run = () => spec.run(input, ctx);
        result = spec.wrap ? await spec.wrap({ ctx, family: spec.family, body, lambdaContext: context }, run) : await run();
      } catch (error) {
        await settle();
        throw error;
      }
      await settle();
      return jsonResponse(200, { ok: true, result });
    });
}
