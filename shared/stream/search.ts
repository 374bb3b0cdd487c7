import type { RecordChange } from '../domain/record-change.js';
import { storeOfType } from '../domain/records/family.js';

/**
 * Keeps a record's search entries in step with it, through its family's store (which puts the
 * prefixes its new image has and its old one lacked, and deletes the ones it no longer has).
 */
export async function projectSearch(change: RecordChange): Promise<void> {
  await storeOfType(change.type)?.syncSearch(change.accountId, change.id, change.old, change.new);
}
