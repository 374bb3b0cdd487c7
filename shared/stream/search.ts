import type { RecordChange } from '../db/changes.js';
import { syncSearchEntries } from '../db/search.js';
import { searchNamesOf } from '../domain/entity-service.js';
import { entityByType, type EntityDefinition } from '../schemas/entities/index.js';

/**
 * Keeps a record's search entries in step with it: the prefixes of its new image that its old
 * image lacked are put, the ones it no longer has are deleted (all of them when it is deleted).
 */
export async function projectSearch(change: RecordChange): Promise<void> {
  const def = entityByType(change.type) as EntityDefinition | undefined;
  if (!def?.search) return;
  const before = change.old ? searchNamesOf(def, change.old) : [];
  const after = change.new ? searchNamesOf(def, change.new) : [];
  const image = change.new ?? change.old;
  if (!image || typeof image.created_at !== 'string') return;
  await syncSearchEntries({
    type: change.type,
    accountId: change.accountId,
    id: change.id,
    createdAt: image.created_at,
    put: after.filter((n) => !before.includes(n)),
    remove: before.filter((n) => !after.includes(n)),
  });
}
