/**
 * The one error type of the API. Every failure a client may see is an ApiError with a
 * contract code; the HTTP status is derived from the code (contract §1), never chosen ad hoc.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

import type { EntityFamily } from './schemas/entities/index.js';

/** Error families (contract §1): one per entity of the entity list, plus the non-record families. */
export type Family = EntityFamily | 'webhooks' | 'custom_fields' | 'imports' | 'inbound_emails' | 'api' | 'auth' | 'api_keys' | 'events'
  // --- exports (contract §16) ---
  | 'exports'
  // --- trash (contract §15) ---
  | 'trash'
  // --- erasures (contract §18) ---
  | 'erasures'
  // --- pipelines (contract §19) ---
  | 'pipelines'
  // --- members and reassignments (contract §20) ---
  | 'members'
  | 'reassignments';

export function statusForCode(code: string): number {
  const name = code.slice(code.indexOf('.') + 1);
  if (code === 'auth.unauthorized') return 401;
  if (code === 'auth.forbidden') return 403;
  if (code === 'api.unknown_operation') return 404;
  if (code === 'api.method_not_allowed') return 405;
  if (code === 'api.payload_too_large') return 413;
  if (code === 'api.rate_limited') return 429;
  if (name === 'not_found') return 404;
  if (/^(conflict|index_building|(stage_)?in_use)$/.test(name)) return 409;
  if (name === 'cursor_expired') return 410;
  if (name === 'endpoint_inactive') return 400;
  // A write of an email an erasure suppressed (contract §18).
  if (name === 'email_suppressed') return 400;
  if (name === 'internal') return 500;
  if (name === 'invalid_request' || name.startsWith('invalid_') || name.endsWith('_required') || name === 'limit_exceeded' || name === 'sort_too_large') return 400;
  // Only ever an item's error inside a batch's 200 answer (contract §13); 400 where a status is asked.
  if (name === 'duplicate_in_batch') return 400;
  return 500;
}

export class ApiError extends Error {
  readonly code: string;
  readonly details?: ErrorDetail[];
  constructor(code: string, message: string, details?: ErrorDetail[], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApiError';
    this.code = code;
    if (details && details.length > 0) this.details = details;
  }
  get status(): number {
    return statusForCode(this.code);
  }
  toJSON() {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export const invalidRequest = (family: Family, message: string, details?: ErrorDetail[]) =>
  new ApiError(`${family}.invalid_request`, message, details);

export const notFound = (family: Family, what: string) => new ApiError(`${family}.not_found`, `${what} not found`);

export const unauthorized = () => new ApiError('auth.unauthorized', 'missing, malformed, unknown or revoked access token');

/** A call outside the key's scopes (contract §14): the message names the scope it lacks. */
export const forbidden = (scope: string) => new ApiError('auth.forbidden', `this API key lacks the scope ${scope}`);

export const internal = (family: Family, cause?: unknown) =>
  new ApiError(`${family}.internal`, 'internal server error', undefined, { cause });
