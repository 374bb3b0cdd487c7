/** Suppressed emails (contract §18): a write of an address an erasure suppressed is refused. */
import { isSuppressed } from '../../db/suppression.js';
import { ApiError } from '../../errors.js';
import type { RecordFamily } from './family.js';

/**
 * Starts the check of an email against the suppressed ones (one read of the keyed hash's item)
 * and returns what throws `<family>.email_suppressed` (400) when the record is a person's
 * (`erase`) and its email was suppressed. Started early, the read runs beside the write's other
 * reads (a create's custom fields and references) and out of an update's optimistic window.
 * Create, update, batches, upserts, imports and merges all write through `draftOf` /
 * `applyUpdate`, which use it.
 */
export function startSuppressionCheck(fam: RecordFamily, accountId: string, email: unknown): () => Promise<void> {
  if (!fam.def.erase || typeof email !== 'string' || email === '') return () => Promise.resolve();
  const found = isSuppressed(accountId, email);
  // Awaited by the returned check; a write that fails before it must not leave the read unhandled.
  found.catch(() => undefined);
  return async () => {
    if (await found) {
      throw new ApiError(`${fam.family}.email_suppressed`, 'this email address was erased and suppressed; it cannot be stored again', [{ path: 'email', message: 'is suppressed' }]);
    }
  };
}

/** The check at once (batches check each distinct address of a call). */
export const checkSuppressed = (fam: RecordFamily, accountId: string, email: unknown): Promise<void> => startSuppressionCheck(fam, accountId, email)();
