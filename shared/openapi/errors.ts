/** How the OpenAPI document groups error codes: by HTTP status. */
import { statusForCode } from '../errors.js';

export { errorCodesFor, verbOf } from '../schemas/error-codes.js';

/** Codes grouped by their HTTP status (statusForCode), statuses ascending. */
export function codesByStatus(codes: readonly string[]): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = statusForCode(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}
