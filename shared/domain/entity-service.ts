/**
 * The domain service of every record family, derived from its entity definition: create, get,
 * update, delete, restore, merge and list with the contract's rules (references checked against
 * the account, computed names, custom fields, cross-field rules, derived read-only fields,
 * filters and search). The rules are plain functions in shared/domain/records/ (one file per
 * operation); the family's store (shared/db/record-store.ts) is the only writer of its records.
 */
import type { AccountMeta } from '../db/meta.js';
import type { StoredRecord } from '../db/items.js';
import type { Entity, RecordOf } from '../schemas/entities/index.js';
import type { Actor } from '../schemas/events.js';
import type { ParsedBody } from '../schemas/record-body.js';
import type { OperationContext } from './context.js';
import type { Page } from './listing.js';
import { create, type CreateOptions, draftOf, get } from './records/create.js';
import { remove } from './records/delete.js';
import { familyOf, toApi, writing } from './records/family.js';
import { list } from './records/list.js';
import { merge } from './records/merge.js';
import { type Preloaded, reconcile, type Resolved } from './records/references.js';
import { restore } from './records/restore.js';
import { type AlsoWrite, applyUpdate, update } from './records/update.js';

export { NAMED_TARGETS } from './records/family.js';
export type { Preloaded, Resolved } from './records/references.js';

export function entityService<D extends Entity>(entity: D) {
  const fam = familyOf(entity);
  type Rec = RecordOf<D>;
  return {
    definition: entity,
    /** The family's record store (the one writer of its records). */
    store: fam.store,
    toApi: (item: Record<string, unknown>, meta?: AccountMeta) => toApi(fam, item, meta) as Rec,
    create: (ctx: OperationContext, body: ParsedBody, opts?: CreateOptions) => create(fam, ctx, body, opts) as Promise<Rec>,
    get: (ctx: OperationContext, id: string) => get(fam, ctx, id) as Promise<Rec>,
    update: (ctx: OperationContext, body: ParsedBody) => update(fam, ctx, body) as Promise<Rec>,
    delete: (ctx: OperationContext, id: string) => remove(fam, ctx, id),
    restore: (ctx: OperationContext, id: string) => restore(fam, ctx, id) as Promise<Rec>,
    merge: (ctx: OperationContext, primaryId: string, secondaryId: string) => merge(fam, ctx, primaryId, secondaryId) as Promise<Rec>,
    list: (ctx: OperationContext, input: Record<string, unknown>) => list(fam, ctx, input) as Promise<Page<Rec>>,
    draftOf: (ctx: OperationContext, body: ParsedBody, opts?: CreateOptions, pre?: Preloaded) => draftOf(fam, ctx, body, opts, pre),
    applyUpdate: (ctx: OperationContext, body: ParsedBody, pre?: Preloaded, also?: AlsoWrite) => applyUpdate(fam, ctx, body, pre, also),
    reconcile: (accountId: string, record: StoredRecord, resolved: Resolved[], actor: Actor) => reconcile(fam, accountId, record, resolved, actor),
    writing: <T>(fn: () => Promise<T>) => writing(fam, fn),
  };
}

export type EntityService<D extends Entity = Entity> = ReturnType<typeof entityService<D>>;
