import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { ApiError, type Family, forbidden, internal, invalidRequest, unauthorized } from '../errors.js';
import type { AuthContext, OperationContext } from '../domain/context.js';
import { covers, requiredScope, type ScopeAccess, scopesFromContext } from '../auth/scopes.js';
import { recordKeyUse } from '../domain/key-use.js';
import { consumeRateLimit, knownOverLimit, type RateLimitDecision, rateLimitHeaders } from '../domain/rate-limit.js';
import { type ApiEvent, type ApiResult, errorResponse, jsonResponse, requestIdOf } from './envelope.js';
import { logErrorAnswer, logKeys, ownLogScope } from './logger.js';

export type { AuthContext, OperationContext };


export type { ApiEvent, ApiResult };
export { errorResponse, jsonResponse, requestIdOf };


export const MAX_BODY_BYTES = 256 * 1024;

/**
 * What the middlewares of one request keep for each other and for the run step (middy's
 * `request.internal`, a fresh object per request): nothing about a request outlives it.
 */
export interface OperationInternal<R = unknown> extends Record<string, unknown> {
  /** The caller (`admit`). */
  auth?: AuthContext;
  /** The limiter's count of this call (`admit`), settled before the answer. */
  limiter?: Limiter;
  /** The family of the operation's error codes. */
  family?: Family;
  /** The JSON object body, as sent (`validate`). */
  body?: Record<string, unknown>;
  /** The operation's input, validated (`validate`). */
  input?: unknown;
  /** What the domain receives: the caller, the operation, the headers (`validate`). */
  ctx?: OperationContext;
  /** Runs the operation's `run` around something (the idempotency of an operation declared `idempotent`); absent: as is. */
  around?: (run: () => Promise<R>) => Promise<R>;
}

/** The `name` of the idempotency middleware (idempotency.ts), which an operation has exactly when declared `idempotent`. */
export const IDEMPOTENCY_MIDDLEWARE = 'idempotency';

/** A middleware of the operation pipeline. */
export type OperationMiddleware<R = unknown> = middy.MiddlewareObj<ApiEvent, ApiResult, Error, Context, OperationInternal<R>>;
type OperationRequest = middy.Request<ApiEvent, ApiResult, Error, Context, OperationInternal>;

export interface OperationSpec<I, R> {
  name: string;
  family: Family;
  /** The declaration's `access`: the scope it needs (`<family>:<access>`), and whether it waits for the limiter. */
  access: ScopeAccess;
  /** The declaration's `idempotent`: `use` must hold the idempotency middleware exactly then (checked when the handler loads). */
  idempotent?: true;
  /**
   * Middlewares between validation and the run, given by the builder from the declaration: the
   * idempotency of an operation declared `idempotent` (idempotency.ts), never by a handler file.
   * Only the builders of idempotent operations import it, so other bundles do not carry it.
   */
  use?: readonly OperationMiddleware<R>[];
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
  // The authorizer's own context (shared/auth/tokens.ts AuthorizerContext: key and member ids, expiry), scopes parsed.
  return { ...auth, scopes: scopesFromContext(auth.scopes) } as AuthContext;
}

/** The limiter's count of one call: started in `before`, settled before the answer. */
interface Limiter {
  counted: Promise<RateLimitDecision | undefined>;
  /** Known once counted: the `RateLimit-*` headers of the answer. */
  decision?: RateLimitDecision;
}

/** Starts counting the call: the account's rate limit and the key's use, in parallel. */
function startLimiter(auth: AuthContext): Limiter {
  const limiter: Limiter = {
    counted: Promise.all([consumeRateLimit(auth.accountId), recordKeyUse(auth)]).then(([decision]) => {
      limiter.decision = decision;
      return decision;
    }),
  };
  // Settled on every path (`admit`); until then a failure must not count as unhandled.
  limiter.counted.catch(() => undefined);
  return limiter;
}

/** Resolves once the limiter has counted the call; throws 429 when it was over the limit. */
async function settle(limiter: Limiter | undefined): Promise<void> {
  const decision = await limiter?.counted;
  if (decision && !decision.allowed) {
    throw new ApiError('api.rate_limited', `this account is over its rate limit (${decision.limit} requests at once): retry after ${decision.retryAfter} s`);
  }
}

/** `before`: only POST (405). */
const postOnly = (): OperationMiddleware => ({
  before: (request) => {
    const method = request.event.requestContext?.http?.method;
    if (method && method !== 'POST') throw new ApiError('api.method_not_allowed', 'only POST is allowed');
  },
});

/**
 * The one place access is enforced, for every operation (contract §14): the key (401), the scope
 * the operation needs (403, from its declaration: family and access, shared/auth/scopes.ts), the
 * account's rate limit (429).
 *
 * `before` authenticates and starts the limiter (`request.internal.limiter`). A write waits for
 * the limiter before anything else (a refused call changes nothing); a read runs beside it, and
 * `after` (or `onError`) settles it, so a read's answer (or error) is replaced by the 429 when the
 * limiter refuses: a read pays the limiter's write in parallel, not in series
 * (docs/performance.md, "Rate limiting"). A refused scope waits for the limiter too (429 first).
 */
const admit = (spec: { family: Family; access: ScopeAccess }): OperationMiddleware => {
  const scope = requiredScope(spec);
  return {
    before: async (request) => {
      const auth = authFrom(request.event);
      const limiter = startLimiter(auth);
      request.internal.auth = auth;
      request.internal.limiter = limiter;
      if (!covers(auth.scopes ?? [], scope)) {
        await settle(limiter);
        throw forbidden(scope);
      }
      if (spec.access === 'write' || knownOverLimit(auth.accountId)) await settle(limiter);
    },
    after: async (request) => {
      await settle(request.internal.limiter);
    },
    onError: async (request) => {
      // Thrown from here, an error would skip the envelope: the limiter's answer replaces the error instead.
      try {
        await settle(request.internal.limiter);
      } catch (error) {
        request.error = error as Error;
      }
    },
  };
};

/** `after`/`onError`: `RateLimit-*` (and on 429 `Retry-After`) on every answer of a request the limiter counted. */
const rateLimitAnswer = (): OperationMiddleware => {
  const add = (request: OperationRequest) => {
    const decision = request.internal.limiter?.decision;
    if (decision && request.response) request.response.headers = { ...request.response.headers, ...rateLimitHeaders(decision) };
  };
  return { after: add, onError: add };
};

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

/** `onError`: the one place where errors become responses (and their log line, which the ApiErrors metric counts). */
const errorEnvelope = (family: Family): OperationMiddleware => ({
  onError: (request) => {
    const apiError = toApiError(request.error, family);
    const requestId = requestIdOf(request.event);
    logErrorAnswer(apiError, requestId, apiError.cause ?? request.error);
    request.response = errorResponse(apiError, requestId);
  },
});

/**
 * The run step's context: Lambda's (through its prototype, unchanged) and the request's internal
 * storage, since middy calls a handler with the event and the context only.
 */
interface RunContext<R> extends Context {
  readonly internal: OperationInternal<R>;
}

/**
 * `before`: the body, read (413, depth, JSON object) and validated by the operation's `parse` (400),
 * and the domain's context: the caller, the operation, the headers (lowercased). Hands the run
 * step `request.internal` (what this and the other middlewares keep there, `around` included) on
 * a context of its own: Lambda's is not changed.
 */
const validate = <I>(spec: { name: string; family: Family; parse: (body: Record<string, unknown>) => I }): OperationMiddleware => ({
  before: (request) => {
    const body = readJsonObject(request.event, spec.family);
    request.internal.input = spec.parse(body);
    request.internal.body = body;
    request.internal.family = spec.family;
    request.internal.ctx = {
      ...request.internal.auth!,
      operation: spec.name,
      headers: Object.fromEntries(Object.entries(request.event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    };
    request.context = Object.assign(Object.create(request.context) as Context, { internal: request.internal }) satisfies RunContext<unknown>;
  },
});

/**
 * Builds a Lambda handler for one operation: a middy pipeline, the same for API Gateway and the
 * local HTTP server. `before` runs in this order, `after` and `onError` in the reverse one:
 *
 * 1. logKeys — the operation and request id on every line of the invocation (logger.ts);
 * 2. rateLimitAnswer — `RateLimit-*` headers on every answer, errors included;
 * 3. errorEnvelope — anything thrown becomes the contract's error envelope;
 * 4. postOnly — 405;
 * 5. admit — 401, 403, the limiter started (a write waits for it), settled before any answer (429);
 * 6. validate — the body read and parsed into the input (413, 400), handed to the run;
 * 7. `spec.use` — the idempotency of an operation declared `idempotent`;
 * 8. the run, in the success envelope.
 */
export function operation<I, R>(spec: OperationSpec<I, R>) {
  if (Boolean(spec.idempotent) !== Boolean(spec.use?.some((m) => m.name === IDEMPOTENCY_MIDDLEWARE))) {
    throw new Error(`${spec.name}: its idempotency must follow its declaration (idempotent: ${Boolean(spec.idempotent)})`);
  }
  const pipeline = middy<ApiEvent, ApiResult, Error, Context, OperationInternal<R>>()
    .use(logKeys<ApiEvent, ApiResult>((request) => ({ operation: spec.name, request_id: requestIdOf(request.event) })))
    .use(rateLimitAnswer())
    .use(errorEnvelope(spec.family))
    .use(postOnly())
    .use(admit(spec))
    .use(validate(spec))
    .use([...(spec.use ?? [])])
    .handler(async (_event, context) => {
      const { input, ctx, around } = (context as RunContext<R>).internal;
      const run = () => spec.run(input as I, ctx!);
      return jsonResponse(200, { ok: true, result: around ? await around(run) : await run() });
    });
  return ownLogScope((event: ApiEvent, context: Context) => pipeline(event, context));
}
