import type { DocumentedErrorCode } from './generated/operations.js';

/**
 * The client's one error type: every failed call throws a CrmError carrying the contract's
 * code (`contacts.not_found`, `auth.unauthorized`, …), the HTTP status, the details and the
 * request id to quote to support.
 */

/** Every code the API documents, plus the client's own (`client.*`); open to new ones. */
export type CrmErrorCode = DocumentedErrorCode | 'client.network_error' | 'client.invalid_response' | (string & {});

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
  /** The request's id from the error body (search it in the logs); undefined when no answer came. */
  readonly requestId: string | undefined;

  constructor(init: { code: CrmErrorCode; status: number; message: string; operation: string; details?: CrmErrorDetail[]; requestId?: string; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CrmError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.operation = init.operation;
    this.requestId = init.requestId;
  }

  /** The family part of the code (`contacts` of `contacts.not_found`). */
  get family(): string {
    return this.code.slice(0, this.code.indexOf('.'));
  }
}

export const isCrmError = (error: unknown, code?: CrmErrorCode): error is CrmError =>
  error instanceof CrmError && (code === undefined || error.code === code);
