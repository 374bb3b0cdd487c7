/**
 * Handlers of the batch operations (contract §13), derived from an entity definition like the
 * CRUD handlers (crud.ts): each handler file is one line
 * (`export const handler = batchGetHandler(contactEntity)`). Batch creates and upserts are
 * declared idempotent: their handlers are `batchCreateHandler` and `batchUpsertHandler` of
 * idempotent-records.ts (over `batchItemsOperation` here), which apply the idempotency their
 * declarations ask for, so that the other handlers' bundles do not carry it.
 */
import { batchDeleteOf, batchGetOf, batchUpdateOf, type batchCreateOf } from '../domain/batch.js';
import type { Family } from '../errors.js';
import type { Entity } from '../schemas/entities/index.js';
import { parseBatchIds, parseBatchItems } from '../schemas/batch.js';
import { operation, type RunWrapper } from './operation.js';

type RunItems = typeof batchCreateOf;
type RunIds = typeof batchGetOf | typeof batchDeleteOf;

/**
 * A batch of items (`create`, `update`, `upsert`) with the wrap its declaration asks for. Each
 * handler passes its own domain function, so its bundle carries that one only.
 */
export const batchItemsOperation = (entity: Entity, verb: 'create' | 'update' | 'upsert', run: RunItems, wrap?: RunWrapper) =>
  operation({
    name: `${entity.family}-batch-${verb}`,
    family: entity.family as Family,
    access: 'write',
    wrap,
    parse: (body) => parseBatchItems(entity.family as Family, body),
    run: ({ items: list }, ctx) => run(entity, ctx, list),
  });

const ids = (entity: Entity, verb: 'delete' | 'get', run: RunIds) =>
  operation({
    name: `${entity.family}-batch-${verb}`,
    family: entity.family as Family,
    access: verb === 'get' ? 'read' : 'write',
    parse: (body) => parseBatchIds(entity.family as Family, body),
    run: ({ ids: list }, ctx): Promise<unknown> => run(entity, ctx, list),
  });

export const batchUpdateHandler = (entity: Entity) => batchItemsOperation(entity, 'update', batchUpdateOf);
export const batchDeleteHandler = (entity: Entity) => ids(entity, 'delete', batchDeleteOf);
export const batchGetHandler = (entity: Entity) => ids(entity, 'get', batchGetOf);
