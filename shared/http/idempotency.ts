/**
 * Idempotent creates (the `Idempotency-Key` header), with Powertools idempotency on the
 * control table (shared/db/idempotency-store.ts).
 *
 * - Active only for the operations whose declaration says `idempotent: true` (every create, batch
 *   create and batch upsert but `api-keys-create`: shared/schemas/resources/), and only when the
 *   header is sent. The builders of those operations' handlers add its middleware from the
 *   declaration (`idempotencyOf`): `handle` of idempotent-resource.ts, and the record families'
 *   idempotent verbs in idempotent-records.ts.
 * - Scope: account + operation + key. The record lives at
 *   pk = `IDEMP#<accountId>#<operation>#<key>`, sk = `IDEMP`; `ttl` (epoch seconds) expires it
 *   24 h after the first success (enable the table's TTL on `ttl` to have DynamoDB delete it;
 *   an expired record is overwritten anyway). The item's sk is not the records' `R`, so the
 *   stream worker ignores it.
 * - A retry with the same key and the same body (hashed by Powertools) returns the stored
 *   result and runs nothing. The same key with another body: `<family>.conflict` (409).
 * - A duplicate that arrives while the first request is still running waits for it (up to
 *   IN_PROGRESS_WAIT_MS) and returns its result; if it is still running then: `<family>.conflict`.
 * - A failed first request (any error) leaves no record, so a retry runs again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { Context } from 'aws-lambda';
import { ERASED_ANSWER_ATTR, idempotencyStore, indexIdempotentAnswer } from '../db/idempotency-store.js';
import { ApiError, type Family, invalidRequest, notFound } from '../errors.js';
import { IDEMPOTENCY_MIDDLEWARE, type OperationContext, type OperationMiddleware } from './operation.js';
import { keys, TABLE_DEFINITION } from '../db/table.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
export const IDEMPOTENCY_TTL_ATTRIBUTE = TABLE_DEFINITION.ttlAttribute;
const IN_PROGRESS_WAIT_MS = 5_000;
const KEY_RE = /^[\x21-\x7E]{1,255}$/;

/** What Powertools hashes: `scope` names the record, `body` is the payload it validates. */
interface IdempotentCall {
  scope: { accountId: string; operation: string; key: string };
  body: Record<string, unknown>;
}

export const idempotencyKeys = { record: keys.idempotency };

/** The header's value when it was sent; validates it. */
function idempotencyKeyOf(family: Family, headers: Record<string, string | undefined>): string | undefined {
  const key = headers[IDEMPOTENCY_HEADER.toLowerCase()];
  if (key === undefined) return undefined;
  if (!KEY_RE.test(key)) {
    throw invalidRequest(family, `${IDEMPOTENCY_HEADER} must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`, [
      { path: IDEMPOTENCY_HEADER, message: 'is not a valid idempotency key' },
    ]);
  }
  return key;
}

const conflict = (family: Family, message: string) => new ApiError(`${family}.conflict`, message);

/** Converts a result to what is stored (e.g. encrypting a secret) and back. */
export interface ResultSeal<R> {
  seal: (result: R, ctx: OperationContext) => Promise<unknown>;
  open: (stored: unknown, ctx: OperationContext) => Promise<R>;
}

/**
 * The idempotency middleware of an operation declared `idempotent` (`before`, after validation):
 * with an `Idempotency-Key` header (checked here, 400), the run goes through `runIdempotent`
 * (`request.internal.around`), so a retry within 24 h returns the first result and creates
 * nothing. `seal` keeps secrets in the stored result encrypted (webhooks-create).
 */
function idempotency<R>(seal?: ResultSeal<R>): OperationMiddleware<R> {
  return {
    name: IDEMPOTENCY_MIDDLEWARE,
    before: (request) => {
      const { ctx, family, body } = request.internal;
      if (!ctx || !family || !body) throw new Error('idempotency runs after validation');
      const key = idempotencyKeyOf(family, ctx.headers);
      if (key === undefined) return;
      const call = { accountId: ctx.accountId, operation: ctx.operation, family, key, body, lambdaContext: request.context };
      request.internal.around = seal
        ? async (run) => seal.open(await runIdempotent(call, async () => seal.seal(await run(), ctx)), ctx)
        : (run) => runIdempotent(call, run);
    },
  };
}

/**
 * The middlewares an operation's declaration asks for: idempotency when it says `idempotent: true`,
 * none otherwise. The only way a handler gets idempotency, so it honours the header exactly when its
 * declaration (and so its function's grant to write idempotency records, and the OpenAPI document)
 * says. Only the builders of idempotent operations import this module (idempotent-records.ts,
 * idempotent-resource.ts), so other bundles do not carry Powertools idempotency.
 */
export const idempotencyOf = <R>(decl: { idempotent?: true }, seal?: ResultSeal<R>): OperationMiddleware<R>[] => (decl.idempotent ? [idempotency(seal)] : []);

/** Families whose records are people (contract §18): their stored answers are indexed by record. */
const PERSONAL_FAMILIES = new Set<Family>(['contacts']);

/** The ids of the records an answer holds: a record's `id`, a batch's `results[].record.id`. */
export function recordIdsOf(result: unknown): string[] {
  if (!result || typeof result !== 'object') return [];
  const r = result as { id?: unknown; results?: Array<{ record?: { id?: unknown } }> };
  const ids = typeof r.id === 'string' ? [r.id] : [];
  if (Array.isArray(r.results)) for (const item of r.results) if (typeof item?.record?.id === 'string') ids.push(item.record.id);
  return ids;
}

/**
 * Runs `run` at most once per (account, operation, key) within 24 h and returns its first
 * result to every retry; see the module comment for the rules.
 */
export async function runIdempotent<R>(
  call: { accountId: string; operation: string; family: Family; key: string; body: Record<string, unknown>; lambdaContext?: Context },
  run: () => Promise<R>,
): Promise<R> {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'body',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
  });
  if (call.lambdaContext) config.registerLambdaContext(call.lambdaContext);
  // Stored as JSON: what a retry gets back is exactly what the first caller got.
  const idempotent = makeIdempotent(
    async (_: IdempotentCall) => {
      const result = JSON.parse(JSON.stringify(await run())) as R;
      // An answer holding a person is indexed by its records, so an erasure can find it (contract §18).
      if (PERSONAL_FAMILIES.has(call.family)) await indexIdempotentAnswer(call.accountId, call.operation, call.key, recordIdsOf(result));
      return result;
    },
    { persistenceStore: idempotencyStore(), config },
  );
  const data: IdempotentCall = { scope: { accountId: call.accountId, operation: call.operation, key: call.key }, body: call.body };
  const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await idempotent(data);
      // An erasure replaced the stored answer (contract §18): the record it created is gone.
      if (answer && typeof answer === 'object' && ERASED_ANSWER_ATTR in answer) throw notFound(call.family, 'record');
      return answer;
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      if (name === 'IdempotencyValidationError') {
        throw conflict(call.family, `${IDEMPOTENCY_HEADER} was already used with a different request body`);
      }
      if (name !== 'IdempotencyAlreadyInProgressError') throw error;
      if (Date.now() >= deadline) throw conflict(call.family, `a request with this ${IDEMPOTENCY_HEADER} is still in progress`);
      await sleep(Math.min(50 * 2 ** attempt, 500));
    }
  }
}
