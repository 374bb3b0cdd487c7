/**
 * The stream worker's projections of record changes: search entries, the fan-out of renames and
 * deletions to every referencing family, the undoing of a restored record's cascades and a
 * merge's re-pointing. The rules and writes are the record services' (shared/domain/records/),
 * through each family's store.
 */
import type { RecordChange } from '../domain/record-change.js';
import { NAMED_TARGETS } from '../domain/records/family.js';
import { fanOutReference } from '../domain/records/fan-out.js';
import { repointMerge } from '../domain/records/merge.js';
import { referencesTo } from '../domain/records/referencing.js';
import { undoCascades } from '../domain/records/restore.js';
import { projectSearch } from './search.js';

export { fanOutReference, referencesTo };

/** Projections kept by the stream worker (the webhook pipeline consumes the same changes). */
export async function applyProjections(change: RecordChange): Promise<void> {
  if (change.op === 'merged' || change.op === 'merging') return repointMerge(change);
  await projectSearch(change);
  if (change.op === 'restored') return undoCascades(change);
  if (referencesTo(change.type).length === 0) return;
  if (change.op === 'deleted') await fanOutReference(change.type, change.accountId, change.id, 'deleted', Number(change.old?.ver ?? 0));
  else if (change.op === 'updated' && change.old?.name !== change.new?.name && NAMED_TARGETS.has(change.type)) {
    await fanOutReference(change.type, change.accountId, change.id, 'renamed');
  }
}
