/**
 * The steps and handlers of the batch operations (contract §13), built from their declarations
 * like the CRUD ones (records.ts): `export const handler = batchGetHandler(contactEntity);`. Batch
 * creates and upserts are declared idempotent: their handlers are `batchCreateHandler` and
 * `batchUpsertHandler` of idempotent-records.ts (over `batchItems` here). Each handler calls its
 * own domain function, so its bundle carries that one only.
 */
import { batchDeleteOf, batchGetOf, batchUpdateOf, type batchCreateOf } from '../domain/batch.js';
import { parseBatchIds, parseBatchItems } from '../schemas/batch.js';
import { recordHandler, type RecordStep } from './records.js';

/** A batch of items (`create`, `update`, `upsert`) to its domain call. */
export const batchItems = (call: typeof batchCreateOf): RecordStep<{ items: unknown[] }> => ({
  parse: (entity, body) => parseBatchItems(entity.family, body),
  run: (entity, ctx, { items }) => call(entity, ctx, items),
});

/** A batch of ids (`delete`, `get`) to its domain call. */
const batchIds = (call: typeof batchGetOf | typeof batchDeleteOf): RecordStep<{ ids: unknown[] }> => ({
  parse: (entity, body) => parseBatchIds(entity.family, body),
  run: (entity, ctx, { ids }) => call(entity, ctx, ids),
});

export const batchUpdateHandler = /* @__PURE__ */ recordHandler('batch-update', /* @__PURE__ */ batchItems(batchUpdateOf));
export const batchDeleteHandler = /* @__PURE__ */ recordHandler('batch-delete', /* @__PURE__ */ batchIds(batchDeleteOf));
export const batchGetHandler = /* @__PURE__ */ recordHandler('batch-get', /* @__PURE__ */ batchIds(batchGetOf));
