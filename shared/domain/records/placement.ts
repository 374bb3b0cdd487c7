/**
 * The hook through which the record writes place a record in a pipeline (contract §19): set by
 * shared/domain/records/stages.ts when a function imports it (the projects' create, update and
 * batch update), so that the other families' bundles do not carry the pipelines' code. A write of
 * a family in pipelines that sends a placing field where the hook is not set is refused, never
 * written raw.
 */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { type Family, invalidRequest } from '../../errors.js';
import type { Actor } from '../../schemas/events.js';

export interface Placement {
  /** Fields to write. */
  set: Record<string, unknown>;
  /** Items of the write's transaction. */
  items: TransactItem[];
}

export type PlaceStage = (family: Family, accountId: string, id: string, sent: Record<string, unknown>, current: StoredRecord | undefined, now: string, actor: Actor) => Promise<Placement | undefined>;

let hook: PlaceStage | undefined;
export const setPlacement = (place: PlaceStage): void => {
  hook = place;
};

const PLACING = ['pipeline_id', 'stage_id'];

/** Where the write puts the record (see stages.ts), through the hook when it is set. */
export async function placeRecord(...args: Parameters<PlaceStage>): Promise<Placement | undefined> {
  if (hook) return hook(...args);
  const [family, , , sent, current] = args;
  if (PLACING.some((f) => f in sent) || (typeof current?.pipeline_id === 'string' && ['status', 'stage'].some((f) => f in sent))) {
    throw invalidRequest(family, 'this operation cannot place a project in a pipeline: use projects-create or projects-update', [{ path: 'pipeline_id', message: 'not available in this operation' }]);
  }
  return undefined;
}
