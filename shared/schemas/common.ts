import * as v from 'valibot';
import { ApiError, type ErrorDetail, type Family, invalidRequest } from '../errors.js';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

export const plainString = v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'));
export const notesString = v.pipe(v.string(), v.maxLength(10_000, 'must be at most 10000 characters'));
export const nameString = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be blank'),
  v.maxLength(200, 'must be at most 200 characters'),
);

const EMAIL_RE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
export const emailString = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.check((s) => s === '' || (EMAIL_RE.test(s) && v.is(v.pipe(v.string(), v.email()), s)), 'must be empty or a valid email address'),
);

export function isHttpUrl(value: string, schemes: readonly string[] = ['http:', 'https:']): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return schemes.includes(url.protocol) && url.hostname !== '';
}

export const httpUrlString = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.check((s) => s === '' || isHttpUrl(s), 'must be empty or an http(s) URL'),
);

export const countInteger = v.nullable(
  v.pipe(v.number(), v.safeInteger('must be a safe integer'), v.minValue(0, 'must be 0 or more')),
);

export const tagList = v.pipe(
  v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'tags must not be blank'), v.maxLength(64, 'tags must be at most 64 characters'))),
  v.transform((tags) => [...new Set(tags)]),
  v.maxLength(50, 'at most 50 distinct tags'),
);

/** A referenced id: the format check is the domain's (it maps to invalid_company_id etc.). */
export const refId = v.nullable(v.string());

export const customFieldsInput = v.record(v.string(), v.unknown());

export const limitInteger = v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be between 1 and 100'),
  v.maxValue(100, 'must be between 1 and 100'),
);

export const cursorString = v.pipe(v.string(), v.maxLength(4096, 'is too long'));

export const searchString = v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters'));

export function issuesToDetails(issues: readonly v.BaseIssue<unknown>[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: issue.path?.map((p) => String(p.key)).join('.') || '',
    message: issue.message,
  }));
}

/** Runs a valibot schema; failures are `<family>.invalid_request` with one detail per issue. */
export function parseWith<S extends v.GenericSchema>(family: Family, schema: S, value: unknown): v.InferOutput<S> {
  const out = v.safeParse(schema, value, { abortPipeEarly: true });
  if (!out.success) throw invalidRequest(family, 'request body is invalid', issuesToDetails(out.issues));
  return out.output;
}

export interface BodyShape {
  /** Fields the operation accepts. */
  allowed: readonly string[];
  /** Fields of the resource a client may not set (named in the error). */
  readOnly?: readonly string[];
}

/** Unknown and read-only fields are rejected by name before anything else is checked. */
export function rejectUnknownFields(family: Family, body: Record<string, unknown>, shape: BodyShape): void {
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(body)) {
    if (shape.allowed.includes(key)) continue;
    details.push({ path: key, message: shape.readOnly?.includes(key) ? 'field is read-only' : 'unknown field' });
  }
  if (details.length > 0) throw invalidRequest(family, `request body has fields that cannot be set: ${details.map((d) => d.path).join(', ')}`, details);
}

/** `id` rules: missing is invalid_request, not a UUID is invalid_id. Returns it lowercased. */
export function requireId(family: Family, body: Record<string, unknown>, field = 'id'): string {
  const id = body[field];
  if (id === undefined) throw invalidRequest(family, `${field} is required`, [{ path: field, message: 'is required' }]);
  if (!isUuid(id)) throw new ApiError(`${family}.invalid_id`, `${field} is not a valid UUID`, [{ path: field, message: 'must be a UUID' }]);
  return id.toLowerCase();
}

/**
 * The JSON shape parseIdOnly accepts, as a schema (for the OpenAPI document and the client's
 * types; parseIdOnly itself stays procedural to keep the contract's error codes).
 */
export const idOnlyInput = v.strictObject({ id: v.pipe(v.string(), v.uuid('must be a UUID')) });

/** For operations that take only `id` (get, delete). */
export function parseIdOnly(family: Family, body: Record<string, unknown>): { id: string } {
  rejectUnknownFields(family, body, { allowed: ['id'] });
  return { id: requireId(family, body) };
}

/** The required name of a resource: missing on create, or null/blank on either, is `<code>`. */
export function requireName(code: string, field: string, body: Record<string, unknown>, mode: 'create' | 'update'): void {
  const name = body[field];
  const missing = mode === 'create' ? name === undefined || name === null : name === null;
  if (missing || (typeof name === 'string' && name.trim() === '')) {
    throw new ApiError(code, `${field} is required and must not be blank`, [{ path: field, message: 'is required' }]);
  }
}
