/**
 * The client's one error type: every failed call throws a CrmError carrying the contract's
 * code (`contacts.not_found`, `auth.unauthorized`, …), the HTTP status and the details.
 */

/** The error codes of the contract (§1–§6); `(string & {})` keeps the type open to new ones. */
export type CrmErrorCode =
  | 'auth.unauthorized'
  | 'api.payload_too_large'
  | 'api.rate_limited'
  | 'api.unknown_operation'
  | 'api.method_not_allowed'
  | `${'contacts' | 'companies' | 'custom_fields' | 'sources' | 'webhooks'}.${
      | 'invalid_request'
      | 'invalid_id'
      | 'invalid_cursor'
      | 'not_found'
      | 'conflict'
      | 'internal'
      | 'invalid_custom_fields'}`
  | 'contacts.first_name_required'
  | 'contacts.invalid_company_id'
  | 'contacts.invalid_source_id'
  | 'companies.name_required'
  | 'sources.name_required'
  | 'custom_fields.name_required'
  | 'webhooks.url_required'
  | 'webhooks.invalid_url'
  | 'webhooks.events_required'
  | 'webhooks.invalid_events'
  /** The client could not reach the server (status 0) or could not read its answer. */
  | 'client.network_error'
  | 'client.invalid_response'
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
