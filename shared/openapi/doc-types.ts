import type * as v from 'valibot';

/** How one operation is described in the OpenAPI document. */
export interface OperationDoc {
  summary: string;
  description?: string;
  /** The body, as the handler validates it. */
  input: v.GenericSchema;
  /** `result` of the success envelope. */
  result: v.GenericSchema;
  /** Error codes beyond the ones derived from the family and verb (errors.ts). */
  errors?: readonly string[];
}
