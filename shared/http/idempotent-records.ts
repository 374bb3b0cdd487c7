/**
 * The handlers of the record families' operations declared `idempotent` (`ENTITY_OPERATIONS`,
 * shared/schemas/resources/entity-operations.ts): `<family>-create`, `-batch-create` and
 * `-batch-upsert`. Built like the others (records.ts), with the idempotency middleware their
 * declaration asks for (`idempotencyOf`, idempotency.ts), so a handler file is one line and never
 * says it: `export const handler = createHandler(contactEntity);`.
 *
 * Apart from records.ts, crud.ts and batch.ts (whose steps they take) so that the other record
 * operations' bundles do not carry Powertools idempotency (~22 KB);
 * test/integration/idempotent-creates.test.ts calls every operation declared idempotent with a key.
 */
import { batchCreateOf, batchUpsertOf } from '../domain/batch.js';
import { ENTITY_OPERATIONS } from '../schemas/resources/entity-operations.js';
import { batchItems } from './batch.js';
import { createStep } from './crud.js';
import { idempotencyOf } from './idempotency.js';
import { type IdempotentRecordVerb, recordOperation, type RecordStep } from './records.js';

/** The handler of a record verb declared idempotent. */
const idempotentRecordHandler = <I>(verb: IdempotentRecordVerb, step: RecordStep<I>) => recordOperation(verb, step, idempotencyOf(ENTITY_OPERATIONS[verb]));

export const createHandler = /* @__PURE__ */ idempotentRecordHandler('create', createStep);
export const batchCreateHandler = /* @__PURE__ */ idempotentRecordHandler('batch-create', /* @__PURE__ */ batchItems(batchCreateOf));
/** Families with a lookup key. */
export const batchUpsertHandler = /* @__PURE__ */ idempotentRecordHandler('batch-upsert', /* @__PURE__ */ batchItems(batchUpsertOf));
