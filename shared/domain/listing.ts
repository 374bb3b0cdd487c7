/**
 * What every paginated list shares: the page shape, the default page size and the contract's
 * cursor rules (§4). Record lists build a plan (shared/domain/records/list.ts) that the data
 * layer runs; the other lists (trash, jobs, deliveries, events) read their own items.
 */
import { cursorKey, decodeCursor, encodeCursor } from '../db/cursor.js';
import { ApiError, type Family } from '../errors.js';
import type { OperationContext } from './context.js';

export const DEFAULT_LIMIT = 25;

export interface Page<T> {
  items: T[];
  next_cursor: string;
}

export interface CursorScope {
  /** The position (exclusive) to continue after; undefined for the first page. */
  after: string | undefined;
  /** `next_cursor` for a page whose last item is at `position` ("" when there is no next page). */
  next(position: string | undefined): string;
}

/** The list position of an item (newest first: creation time, then id). */
export { positionOf as listPosition } from '../db/items.js';

/**
 * The contract's cursor rules (§4) for one request: a cursor is valid only for the same account,
 * operation and (canonical) filters, else `<family>.invalid_cursor`. Every paginated list uses it.
 */
export async function cursorScope(ctx: OperationContext, family: Family, cursor: string | undefined, filters: unknown): Promise<CursorScope> {
  const key = await cursorKey();
  const scope = { accountId: ctx.accountId, operation: ctx.operation, filters };
  let after: string | undefined;
  if (cursor !== undefined && cursor !== '') {
    after = decodeCursor(cursor, scope, key);
    if (after === undefined) throw new ApiError(`${family}.invalid_cursor`, 'cursor is invalid for this request');
  }
  return { after, next: (position) => (position ? encodeCursor(position, scope, key) : '') };
}
