/**
 * Handlers of the batch operations (contract §13), derived from an entity definition like the
 * CRUD handlers (crud.ts): each handler file is one line
 * (`export const handler = batchCreateHandler(contactEntity, { wrap: idempotentCreate() })`).
 */
import { batchCreateOf, batchDeleteOf, batchGetOf, batchUpdateOf, batchUpsertOf } from '../domain/batch.js';
import type { Family } from '../errors.js';
import type { Entity } from '../schemas/entities/index.js';
import { parseBatchIds, parseBatchItems } from '../schemas/batch.js';
import { operation, type RunWrapper } from './operation.js';

type RunItems = typeof batchCreateOf;
type RunIds = typeof batchGetOf | typeof batchDeleteOf;

// Each handler passes its own domain function, so its bundle carries that one only.
const items = (entity: Entity, verb: 'create' | 'update' | 'upsert', run: RunItems, opts: { wrap?: RunWrapper } = {}) =>
  operation({
    name: `${entity.family}-batch-${verb}`,
    family: entity.family as Family,
    access: 'write',
    wrap: opts.wrap,
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

/** `<family>-batch-create`; pass `{ wrap: idempotentCreate() }` for Idempotency-Key. */
export const batchCreateHandler = (entity: Entity, opts: { wrap?: RunWrapper } = {}) => items(entity, 'create', batchCreateOf, opts);
export const batchUpdateHandler = (entity: Entity) => items(entity, 'update', batchUpdateOf);
/** `<family>-batch-upsert` (families with a lookup key); pass `{ wrap: idempotentCreate() }` for Idempotency-Key. */
export const batchUpsertHandler = (entity: Entity, opts: { wrap?: RunWrapper } = {}) => items(entity, 'upsert', batchUpsertOf, opts);
export const batchDeleteHandler = (entity: Entity) => ids(entity, 'delete', batchDeleteOf);
export const batchGetHandler = (entity: Entity) => ids(entity, 'get', batchGetOf);
