import * as v from 'valibot';
import { ApiError, type ErrorDetail, type Family, invalidRequest } from '../errors.js';

import { isUuid, plainString, emailString, isHttpUrl, httpUrlString, tagList, limitInteger, cursorString } from './primitives.js';

export { isUuid, plainString, emailString, isHttpUrl, httpUrlString, tagList, limitInteger, cursorString };

/** How the contract names a JSON type (`must be a string`), for valibot's `Expected Array` issues. */
const TYPE_WORDS: Record<string, string> = { string: 'a string', number: 'a number', boolean: 'true or false', null: 'null', undefined: 'absent', Array: 'an array', Object: 'an object', Date: 'a date' };

/** A wrong JSON type in the contract's words; other issues keep the message their schema gives. */
function issueMessage(issue: v.BaseIssue<unknown>): string {
  // A required key that is absent (strict objects): "is required", not the validator's wording.
  if (issue.message.startsWith('Invalid key') && issue.received === 'undefined') return 'is required';
  if (issue.message.startsWith('Invalid key')) return 'is not a known field';
  if (issue.kind !== 'schema' || !issue.message.startsWith('Invalid type')) return issue.message;
  const expected = (issue.expected ?? '').replace(/^\((.*)\)$/, '$1').split('|').map((t) => t.trim()).filter((t) => t && t !== 'undefined' && t !== 'never');
  return expected.length ? `must be ${expected.map((t) => TYPE_WORDS[t] ?? t).join(' or ')}` : 'has the wrong type';
}

export function issuesToDetails(issues: readonly v.BaseIssue<unknown>[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: issue.path?.map((p) => String(p.key)).join('.') || '',
    message: issueMessage(issue),
  }));
}

/** The error's message: the first problem in words (`tags must be an array of strings`). */
export function detailsSummary(details: readonly ErrorDetail[]): string {
  const first = details[0];
  if (!first) return 'request body is invalid';
  const field = first.path.replace(/(\.\d+)+$/, '');
  const more = details.length > 1 ? ` (and ${details.length - 1} more problem${details.length > 2 ? 's' : ''}: see details)` : '';
  return `${field ? `${field} ` : 'request body '}${first.message}${more}`;
}

/** Runs a valibot schema; failures are `<family>.invalid_request` with one detail per issue. */
export function parseWith<S extends v.GenericSchema>(family: Family, schema: S, value: unknown): v.InferOutput<S> {
  const out = v.safeParse(schema, value, { abortPipeEarly: true });
  if (!out.success) {
    const details = issuesToDetails(out.issues);
    throw invalidRequest(family, detailsSummary(details), details);
  }
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
export const idOnlyInput = /* @__PURE__ */ (() => v.strictObject({ id: v.pipe(v.string(), v.uuid('must be a UUID'), v.metadata({ description: 'Id of the record', examples: ['4f1c1b4e-8a8e-4c55-9a43-3b0f5d6a7e21'] })) }))();

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
