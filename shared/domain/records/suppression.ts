/** Suppressed emails (contract §18): a write of an address an erasure suppressed is refused. */
import { isSuppressed } from '../../db/suppression.js';
import { ApiError } from '../../errors.js';
import type { RecordFamily } from './family.js';

/**
 * Throws `<family>.email_suppressed` (400) when the record is a person's (`erase`) and its email
 * was suppressed (one read of the keyed hash's item). Create, update, batches, upserts, imports
 * and merges all write through `draftOf` / `applyUpdate`, which call this.
 */
export async function checkSuppressed(fam: RecordFamily, accountId: string, email: unknown): Promise<void> {
  if (!fam.def.erase || typeof email !== 'string' || email === '') return;
  if (await isSuppressed(accountId, email)) {
    throw new ApiError(`${fam.family}.email_suppressed`, 'this email address was erased and suppressed; it cannot be stored again', [{ path: 'email', message: 'is suppressed' }]);
  }
}
