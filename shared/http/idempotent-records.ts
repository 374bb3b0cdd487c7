/**
 * The handlers of the record families' operations declared `idempotent`: `<family>-create`,
 * `-batch-create` and `-batch-upsert` (their declarations: `ENTITY_OPERATIONS`,
 * shared/schemas/resources/entity-operations.ts). Each applies the idempotency its declaration
 * asks for (`idempotencyOf`, idempotency.ts), so a handler file is one line and never says it:
 * `export const handler = createHandler(contactEntity);`.
 *
 * Apart from crud.ts and batch.ts (whose `createOperation` and `batchItemsOperation` they build
 * on) so that the other record operations' bundles do not carry Powertools idempotency (~22 KB);
 * test/integration/idempotent-creates.test.ts calls every operation declared idempotent with a key.
 */
import { batchCreateOf, batchUpsertOf } from '../domain/batch.js';
import type { Entity } from '../schemas/entities/index.js';
import { ENTITY_BATCH_CREATE, ENTITY_BATCH_UPSERT, ENTITY_CREATE } from '../schemas/resources/entity-operations.js';
import { batchItemsOperation } from './batch.js';
import { createOperation } from './crud.js';
import { idempotencyOf } from './idempotency.js';

/** `<family>-create`. */
export const createHandler = <D extends Entity>(entity: D) => createOperation(entity, idempotencyOf(ENTITY_CREATE));

/** `<family>-batch-create`. */
export const batchCreateHandler = (entity: Entity) => batchItemsOperation(entity, 'create', batchCreateOf, idempotencyOf(ENTITY_BATCH_CREATE));

/** `<family>-batch-upsert` (families with a lookup key). */
export const batchUpsertHandler = (entity: Entity) => batchItemsOperation(entity, 'upsert', batchUpsertOf, idempotencyOf(ENTITY_BATCH_UPSERT));
