/**
 * The error codes an operation can return, derived from its name (family, verb) and the
 * contract (§1–§6, §13, §14), plus the extra codes its declaration names (resource.ts).
 */
import { customField, ENTITIES, type EntityDefinition } from './entities/index.js';

/** The verb of an operation name: its last dash-separated word (`custom-fields-list` → `list`). */
export const verbOf = (name: string): string => name.slice(name.lastIndexOf('-') + 1);

/** The `*_required` code of each family's required field on create/update (contract §3, §5, §6, §8, §9). */
const NAME_REQUIRED: Partial<Record<string, readonly string[]>> = {
  ...Object.fromEntries(ENTITIES.map((e) => [e.family, [`${e.family}.${e.required}_required`]])),
  custom_fields: ['custom_fields.name_required'],
};

/** Families whose records carry `custom_fields` values (contract §5). */
const WITH_CUSTOM_FIELDS = new Set<string>(ENTITIES.filter((e) => customField(e as EntityDefinition)).map((e) => e.family));

/** Families whose records are people (contract §18): their email may be suppressed. */
const ERASABLE = new Set<string>(ENTITIES.filter((e) => 'erase' in e && e.erase).map((e) => e.family));

/** Paginated lists (contract §4): the ones whose result has `next_cursor`. */
export function errorCodesFor(entry: { name: string; family: string }, opts: { paginated: boolean; extra?: readonly string[] }): string[] {
  const f = entry.family;
  const verb = verbOf(entry.name);
  // auth.forbidden: the key lacks the operation's scope; api.rate_limited: the account's rate
  // limit (contract §14), or API Gateway's stage-wide throttling (deployed), before the function runs.
  const codes = ['auth.unauthorized', 'auth.forbidden', 'api.payload_too_large', 'api.rate_limited', `${f}.invalid_request`, `${f}.internal`];
  // A batch (contract §13) answers its items' failures inside its 200 result; the call itself fails
  // only on its shape, an Idempotency-Key conflict (create, upsert) or, for batch-get, an id that is not a UUID.
  if (entry.name.includes('-batch-')) {
    if (verb === 'create' || verb === 'upsert') codes.push(`${f}.conflict`);
    return [...new Set([...codes, ...(opts.extra ?? [])])];
  }
  if (['get', 'update', 'delete'].includes(verb)) codes.push(`${f}.invalid_id`, `${f}.not_found`);
  if (opts.paginated) codes.push(`${f}.invalid_cursor`);
  if (verb === 'create' || verb === 'update') {
    codes.push(...(NAME_REQUIRED[f] ?? []));
    if (WITH_CUSTOM_FIELDS.has(f)) codes.push(`${f}.invalid_custom_fields`);
    // An email an erasure suppressed (contract §18).
    if (ERASABLE.has(f)) codes.push(`${f}.email_suppressed`);
  }
  // Idempotency-Key reuse with another body, or a duplicate still running (shared/http/idempotency.ts).
  if (verb === 'create') codes.push(`${f}.conflict`);
  codes.push(...(opts.extra ?? []));
  return [...new Set(codes)];
}

