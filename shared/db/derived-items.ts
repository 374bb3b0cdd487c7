/**
 * Moving the derived items (search entries and their counters, the change log) from the records'
 * table to the control table, where this version keeps them (shared/db/search.ts,
 * shared/db/events.ts): for a stack deployed before they moved (docs/deploy.md, "Upgrading a
 * stack"). A parallel Scan of the table; each item in one of those kinds' partitions (the same
 * patterns as their grants' `dynamodb:LeadingKeys`) is put into the control table, then deleted
 * from the table. Idempotent: a run that stopped midway is run again.
 */
import { inPartitionsOf, type ItemKind } from '../schemas/policies.js';
import { batchWriteItems, scanPages } from './items.js';
import { TABLE_DEFINITION } from './table.js';

/** The kinds of items that live in the control table since they are derived from the records' stream. */
const DERIVED_KINDS = ['searchEntries', 'changeLog'] as const satisfies readonly ItemKind[];

export const isDerivedItem = (pk: string): boolean => DERIVED_KINDS.some((kind) => inPartitionsOf(kind, pk));

export interface MoveProgress {
  scanned: number;
  moved: number;
}

/** Moves every derived item of `from` to `to`, scanning in `segments` parallel segments; `onPage` after each page. */
export async function moveDerivedItems(opts: { from: string; to: string; segments?: number; onPage?: (p: MoveProgress) => void }): Promise<MoveProgress> {
  const total = opts.segments ?? 4;
  const progress: MoveProgress = { scanned: 0, moved: 0 };
  const pk = TABLE_DEFINITION.partitionKey;
  const sk = TABLE_DEFINITION.sortKey;
  await scanPages(opts.from, total, async (items, scanned) => {
    const derived = items.filter((item) => isDerivedItem(String(item[pk])));
    if (derived.length) {
      // Put first, then delete: a run stopped between the two leaves a copy, never a loss.
      await batchWriteItems(derived.map((Item) => ({ PutRequest: { Item } })), opts.to);
      await batchWriteItems(derived.map((item) => ({ DeleteRequest: { Key: { [pk]: item[pk], [sk]: item[sk] } } })), opts.from);
    }
    progress.scanned += scanned;
    progress.moved += derived.length;
    opts.onPage?.({ ...progress });
  });
  return progress;
}
