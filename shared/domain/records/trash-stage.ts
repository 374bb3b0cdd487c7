/**
 * Hooks through which a deletion and a restore end and begin a record's stage visit (contract
 * §19), in the same transaction: set by shared/domain/records/stages.ts where a function imports
 * it (the projects' delete, batch delete and restore), so the other families' bundles carry none
 * of the pipelines' code.
 */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import type { TrashItem } from '../../db/trash.js';
import type { Placement } from './placement.js';

export const trashStage: {
  /** The deletion's items: the current visit closed, the project kept in its pipeline's count as trashed. */
  deleted?: (accountId: string, current: StoredRecord, now: string) => TransactItem[];
  /** The restore's fields and items: a new visit of the stage it was in. */
  restored?: (accountId: string, trashed: TrashItem, now: string, actor: unknown) => Promise<Placement | undefined>;
} = {};
