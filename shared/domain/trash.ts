/**
 * `trash-list` (contract §15): the account's trashed records, most recently deleted first,
 * paginated as every list (§4). The records are shaped as the API showed them when deleted.
 */
import { listTrash } from '../db/trash.js';
import { type EntityType } from '../db/table.js';
import { TRASH_ENTITIES } from '../schemas/entities/index.js';
import type { TrashListInput, TrashPage } from '../schemas/trash.js';
import type { OperationContext } from './context.js';
import { cursorScope, DEFAULT_LIMIT } from './listing.js';
import { familyOf, toApi } from './records/family.js';
import { readMeta } from '../db/meta.js';

export async function listTrashed(ctx: OperationContext, input: TrashListInput): Promise<TrashPage> {
  const entities = TRASH_ENTITIES.filter((e) => !input.family || e.family === input.family);
  const scope = await cursorScope(ctx, 'trash', input.cursor, { family: input.family ?? '' });
  const [page, meta] = await Promise.all([
    listTrash(ctx.accountId, entities.map((e) => e.type as EntityType), scope.after, input.limit ?? DEFAULT_LIMIT),
    readMeta(ctx.accountId),
  ]);
  // A trashed record keeps the names it stored (no pending rename of a linked record applies to it).
  const stored = { ...meta, overrides: new Map() };
  return {
    items: page.items.map((t) => {
      const fam = familyOf(TRASH_ENTITIES.find((e) => e.type === t.type)!);
      return { family: fam.family, record: toApi(fam, t.record, stored), deleted_at: t.deleted_at, purge_at: t.purge_at };
    }) as TrashPage['items'],
    next_cursor: scope.next(page.next),
  };
}
