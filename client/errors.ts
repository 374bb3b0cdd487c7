import type { Family } from '../shared/errors.js';
import type { Entity } from '../shared/schemas/entities/index.js';

/**
 * The client's one error type: every failed call throws a CrmError carrying the contract's
 * code (`contacts.not_found`, `auth.unauthorized`, …), the HTTP status and the details.
 */

/**
 * The error codes of the contract (§1–§11), derived from the server's families and entity
 * definitions (type-only imports: nothing of the server is bundled); `(string & {})` keeps the
 * type open to new ones.
 */
export type CrmErrorCode =
  | 'auth.unauthorized'
  | 'api.payload_too_large'
  | 'api.rate_limited'
  | 'api.unknown_operation'
  | 'api.method_not_allowed'
  | `${Exclude<Family, 'api' | 'auth'>}.${'invalid_request' | 'invalid_id' | 'invalid_cursor' | 'not_found' | 'conflict' | 'internal' | 'limit_exceeded'}`
  | `${Entity['family']}.invalid_custom_fields`
  | { [E in Entity as E['family']]: `${E['family']}.${E['required']}_required` }[Entity['family']]
  | `${Entity['family']}.invalid_${string}_id${'' | 's'}`
  | 'custom_fields.name_required'
  | 'webhooks.url_required'
  | 'webhooks.invalid_url'
  | 'webhooks.events_required'
  | 'webhooks.invalid_events'
  | 'webhooks.endpoint_inactive'
  | 'events.cursor_expired'
  | (string & {});

export interface CrmErrorDetail {
  path: string;
  message: string;
}

export class CrmError extends Error {
  readonly code: CrmErrorCode;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly details: CrmErrorDetail[];
  /** The operation that failed. */
  readonly operation: string;

  constructor(init: { code: CrmErrorCode; status: number; message: string; operation: string; details?: CrmErrorDetail[]; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CrmError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.operation = init.operation;
  }

  /** The family part of the code (`contacts` of `contacts.not_found`). */
  get family(): string {
    return this.code.slice(0, this.code.indexOf('.'));
  }
}

export const isCrmError = (error: unknown, code?: CrmErrorCode): error is CrmError =>
  error instanceof CrmError && (code === undefined || error.code === code);
