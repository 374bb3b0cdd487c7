/**
 * Field rules as valibot schemas: pure declarations (no runtime imports), shared by the field
 * builders, the entity definitions and the other schemas. Each is built in a function call marked
 * `@__PURE__`, so a bundle that does not use it drops it (a valibot call is not known to be free
 * of side effects, and would stay): a webhooks function does not carry tag or email rules.
 */
import * as v from 'valibot';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

export const plainString = /* @__PURE__ */ (() => v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters')))();
export const notesString = /* @__PURE__ */ (() => v.pipe(v.string(), v.maxLength(10_000, 'must be at most 10000 characters')))();
export const nameString = /* @__PURE__ */ (() => v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be blank'),
  v.maxLength(200, 'must be at most 200 characters'),
))();

const EMAIL_RE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
export const emailString = /* @__PURE__ */ (() => v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(254, 'must be at most 254 characters'),
  v.check((s) => s === '' || (EMAIL_RE.test(s) && v.is(v.pipe(v.string(), v.email()), s)), 'must be empty or a valid email address'),
))();

export function isHttpUrl(value: string, schemes: readonly string[] = ['http:', 'https:']): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return schemes.includes(url.protocol) && url.hostname !== '';
}

export const httpUrlString = /* @__PURE__ */ (() => v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.check((s) => s === '' || isHttpUrl(s), 'must be empty or an http(s) URL'),
))();

export const countInteger = /* @__PURE__ */ (() => v.nullable(
  v.pipe(v.number(), v.safeInteger('must be a safe integer'), v.minValue(0, 'must be 0 or more')),
))();

export const tagList = /* @__PURE__ */ (() => v.pipe(
  v.array(v.pipe(v.string('must be an array of strings'), v.trim(), v.minLength(1, 'tags must not be blank'), v.maxLength(64, 'tags must be at most 64 characters')), 'must be an array of strings'),
  v.transform((tags) => [...new Set(tags)]),
  v.maxLength(50, 'at most 50 distinct tags'),
))();

/** A referenced id: the format check is the domain's (it maps to invalid_company_id etc.). */
export const refId = /* @__PURE__ */ (() => v.nullable(v.string()))();

export const customFieldsInput = /* @__PURE__ */ (() => v.record(v.string(), v.unknown()))();

export const limitInteger = /* @__PURE__ */ (() => v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be between 1 and 100'),
  v.maxValue(100, 'must be between 1 and 100'),
))();

export const cursorString = /* @__PURE__ */ (() => v.pipe(v.string(), v.maxLength(4096, 'is too long')))();

export const searchString = /* @__PURE__ */ (() => v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters')))();

