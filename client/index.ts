/**
 * Typed client of the CRM API, for Node (≥ 20) and browsers: fetch-based, no Node-only imports.
 *
 *   const crm = createClient({ baseUrl: 'http://127.0.0.1:3000', token });
 *   const c = await crm.contacts.create({ first_name: 'Ada' }, { idempotencyKey: crypto.randomUUID() });
 *   for await (const contact of crm.contacts.list({ tags: ['vip'] })) console.log(contact.first_name);
 *
 * One method per operation of the registry, grouped by family (`crm.customFields.list`); request
 * and result types are generated from the OpenAPI document the server publishes
 * (generated into client/generated/ from the OpenAPI document: `npm run client:generate`). Failures throw CrmError with the contract's code. Calls that
 * are safe to repeat (everything but a create without an Idempotency-Key) are retried on 429,
 * 5xx and network errors with exponential backoff and full jitter (a 429's `Retry-After` is
 * honoured, up to maxDelayMs); `onRateLimit` reports the account's `RateLimit-*` figures.
 */
import type { paths } from './generated/api.js';
import { OPERATIONS } from './generated/operations.js';
import { CrmError, type CrmErrorDetail } from './errors.js';

export { CrmError, isCrmError, type CrmErrorCode, type CrmErrorDetail } from './errors.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks.js';
export type { components, paths } from './generated/api.js';

// --- types derived from the generated OpenAPI types -----------------------------------------------

type Operation = (typeof OPERATIONS)[number];
export type OperationName = Operation['name'];
type Post<K extends OperationName> = paths[`/api/${K}`]['post'];
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** An operation's request body (`{}` when it takes none). */
export type Input<K extends OperationName> = Post<K> extends { requestBody: infer R } ? JsonOf<R> : Post<K> extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : Record<string, never>;
/** An operation's `result` (the success envelope's payload). */
export type Result<K extends OperationName> = JsonOf<Post<K>['responses'][200]> extends { result: infer R } ? R : never;
type Camel<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;

/** Common record types, for convenience. */
export type Contact = Result<'contacts-get'>;
export type Company = Result<'companies-get'>;
export type Source = Result<'sources-get'>;
export type CustomField = Result<'custom-fields-get'>;
export type WebhookEndpoint = Result<'webhooks-get'>;
export type Project = Result<'projects-get'>;
export type Activity = Result<'activities-get'>;
export type InboundEmail = Result<'inbound-emails-get'>;
export type ApiKey = Result<'api-keys-get'>;

/** Where the account stands against its rate limit (contract §14), from an answer's `RateLimit-*` headers. */
export interface RateLimitInfo {
  operation: string;
  /** The bucket size: requests allowed at once after a quiet period. */
  limit: number;
  /** Requests the account can make right now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
}

export interface CallOptions {
  /** Sent as `Idempotency-Key` (creates): a retried create returns the first result. Makes a create retryable. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
}

/** A paginated result: await it for one page, or iterate it for every item of every page. */
export interface PageRequest<P extends { items: readonly unknown[] }> extends PromiseLike<P>, AsyncIterable<P['items'][number]> {
  /** Every page, starting with this one. */
  pages(): AsyncIterable<P>;
}

type Paginated = { items: readonly unknown[]; next_cursor: string };
/** The body may be left out when it is optional or has no required field. */
type OptionalBody<K extends OperationName> = Post<K> extends { requestBody: unknown } ? (Partial<Input<K>> extends Input<K> ? true : false) : true;
type Args<K extends OperationName> = OptionalBody<K> extends true ? [input?: Input<K>, options?: CallOptions] : [input: Input<K>, options?: CallOptions];
type Method<K extends OperationName> = Result<K> extends Paginated ? (...args: Args<K>) => PageRequest<Result<K>> : (...args: Args<K>) => Promise<Result<K>>;
type FamilyMethods<P extends string> = { [O in Extract<Operation, { prefix: P }> as Camel<O['method']>]: Method<O['name']> };

export type CrmClient = { [P in Operation['prefix'] as Camel<P>]: FamilyMethods<P> } & {
  /** Any operation by name (also the ones this client version has no types for). */
  call<K extends OperationName>(operation: K, input?: Input<K>, options?: CallOptions): Promise<Result<K>>;
};

// --- options --------------------------------------------------------------------------------------

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First backoff ceiling in ms (default 200); doubles per attempt. */
  baseDelayMs?: number;
  /** Largest wait in ms (default 5000), also for Retry-After. */
  maxDelayMs?: number;
}

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:3000` (operations are POSTed to `<baseUrl>/api/<operation>`). */
  baseUrl: string;
  /** Bearer token, or a function returning one (called per request). */
  token: string | (() => string | Promise<string>);
  /** A fetch implementation (default: globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  retry?: RetryOptions;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Called with the `RateLimit-*` figures of every answer that carries them (rate limiting on). */
  onRateLimit?: (info: RateLimitInfo) => void;
}

const RETRYABLE_STATUS = (status: number) => status === 429 || (status >= 500 && status <= 599);

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retry-After in ms (seconds or an HTTP date), if present. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

interface Envelope {
  ok?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; details?: unknown; request_id?: unknown };
}

function errorFrom(operation: string, status: number, body: Envelope | undefined): CrmError {
  const e = body?.error;
  if (e && typeof e.code === 'string') {
    return new CrmError({
      operation,
      status,
      code: e.code,
      message: typeof e.message === 'string' ? e.message : e.code,
      details: Array.isArray(e.details) ? (e.details as CrmErrorDetail[]) : undefined,
      requestId: typeof e.request_id === 'string' ? e.request_id : undefined,
    });
  }
  return new CrmError({ operation, status, code: 'client.invalid_response', message: `unexpected response (HTTP ${status}) from ${operation}` });
}

export function createClient(options: ClientOptions): CrmClient {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const retry = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 5000, ...options.retry };
  const backoff = (attempt: number) => Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);

  async function call(operation: string, input: unknown = {}, opts: CallOptions = {}): Promise<unknown> {
    const isCreate = operation.endsWith('-create');
    const retryable = !isCreate || opts.idempotencyKey !== undefined;
    const maxRetries = retryable ? (opts.maxRetries ?? retry.maxRetries) : 0;
    const body = JSON.stringify(input ?? {});
    for (let attempt = 0; ; attempt++) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      const headers: Record<string, string> = { ...options.headers, 'content-type': 'application/json', authorization: `Bearer ${token}` };
      if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
      let response: Response;
      try {
        response = await fetchImpl(`${baseUrl}/api/${operation}`, { method: 'POST', headers, body, signal: opts.signal });
      } catch (error) {
        if (opts.signal?.aborted) throw error;
        if (attempt >= maxRetries) {
          throw new CrmError({ operation, status: 0, code: 'client.network_error', message: `could not reach the API: ${(error as Error)?.message ?? error}`, cause: error });
        }
        await sleep(backoff(attempt), opts.signal);
        continue;
      }
      const limit = response.headers.get('ratelimit-limit');
      if (limit !== null && options.onRateLimit) {
        options.onRateLimit({ operation, limit: Number(limit), remaining: Number(response.headers.get('ratelimit-remaining')), reset: Number(response.headers.get('ratelimit-reset')) });
      }
      const payload = (await response.json().catch(() => undefined)) as Envelope | undefined;
      if (response.ok && payload?.ok === true) return payload.result;
      if (RETRYABLE_STATUS(response.status) && attempt < maxRetries) {
        const wait = retryAfterMs(response.headers.get('retry-after'));
        await sleep(wait === undefined ? backoff(attempt) : Math.min(wait, retry.maxDelayMs), opts.signal);
        continue;
      }
      throw errorFrom(operation, response.status, payload);
    }
  }

  function paginate(operation: string, input: Record<string, unknown> = {}, opts: CallOptions = {}): PageRequest<Paginated> {
    let first: Promise<Paginated> | undefined;
    // A non-paginated list (`{ items }` only) has no next_cursor: iteration stops after one page.
    const firstPage = () => (first ??= call(operation, input, opts) as Promise<Paginated>);
    async function* pages(): AsyncGenerator<Paginated> {
      let page = await firstPage();
      yield page;
      // The change log (events-list) always has a next_cursor: it is done when has_more is false.
      while (page.next_cursor && (page as { has_more?: boolean }).has_more !== false) {
        page = (await call(operation, { ...input, cursor: page.next_cursor }, opts)) as Paginated;
        yield page;
      }
    }
    return {
      then: (onFulfilled, onRejected) => firstPage().then(onFulfilled, onRejected),
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.items;
      },
    };
  }

  const client: Record<string, Record<string, unknown>> = {};
  for (const { name, prefix, method, paged } of OPERATIONS) {
    const family = (client[camel(prefix)] ??= {});
    // A paged operation (its result has `next_cursor`) is a PageRequest: awaitable like a promise,
    // and iterable page after page.
    family[camel(method)] =
      paged
        ? (input?: Record<string, unknown>, opts?: CallOptions) => paginate(name, input, opts)
        : (input?: unknown, opts?: CallOptions) => call(name, input, opts);
  }
  return Object.assign(client, { call }) as unknown as CrmClient;
}
