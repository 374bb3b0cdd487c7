/**
 * The handlers of the record families' operations (contacts, companies, lead sources, projects,
 * activities), built from their declarations: a handler's name (`<family>-<verb>`), family, access
 * and idempotency are its entry of `ENTITY_OPERATIONS` (shared/schemas/resources/entity-operations.ts),
 * from which the registry, the grants and the OpenAPI document follow too. What a verb adds is its
 * step: how its body is parsed and the one domain call it makes (crud.ts, batch.ts, trash.ts,
 * idempotent-records.ts), so a handler file is one line (`export const handler = getHandler(contactEntity);`)
 * and a handler's bundle carries its own domain call only (each step is its own export; the
 * builders' results are marked pure, so a bundle drops the ones it does not use).
 *
 * `recordHandler` takes only verbs not declared idempotent (typecheck fails otherwise), and
 * `idempotentRecordHandler` (idempotent-records.ts) only the others: it alone imports the
 * idempotency middleware, so other bundles do not carry Powertools idempotency (~22 KB).
 */
import { familyOf, type RecordFamily } from '../domain/records/family.js';
import { parseIdOnly } from '../schemas/common.js';
import type { Entity } from '../schemas/entities/index.js';
import { ENTITY_OPERATIONS, type EntityOperationEffects, type EntityVerb } from '../schemas/resources/entity-operations.js';
import { operationName } from '../schemas/resource.js';
import { type OperationContext, type OperationMiddleware, operation } from './operation.js';

/** What a record verb does beyond its declaration: its body's parse and its one domain call. */
export interface RecordStep<I> {
  parse: (entity: Entity, body: Record<string, unknown>) => I;
  run: (entity: Entity, ctx: OperationContext, input: I) => Promise<unknown>;
}

/** The record verbs declared `idempotent`. */
export type IdempotentRecordVerb = { [V in EntityVerb]: (typeof ENTITY_OPERATIONS)[V] extends { idempotent: true } ? V : never }[EntityVerb];

/** The handler of `<family>-<verb>` for each entity it is given, from the verb's declaration; `use`: idempotency (idempotent-records.ts). */
export const recordOperation =
  <I>(verb: EntityVerb, step: RecordStep<I>, use: readonly OperationMiddleware[] = []) =>
  (entity: Entity) => {
    const decl: EntityOperationEffects = ENTITY_OPERATIONS[verb];
    return operation({
      name: operationName({ prefix: entity.family }, verb),
      family: entity.family,
      access: decl.access,
      idempotent: decl.idempotent,
      use,
      parse: (body) => step.parse(entity, body),
      run: (input, ctx) => step.run(entity, ctx, input),
    });
  };

/** The handler of a record verb not declared idempotent. */
export const recordHandler = <I>(verb: Exclude<EntityVerb, IdempotentRecordVerb>, step: RecordStep<I>) => recordOperation(verb, step);

/** The step of a verb on one record by id (get, delete, restore). */
export const byId = (call: (fam: RecordFamily, ctx: OperationContext, id: string) => Promise<unknown>): RecordStep<{ id: string }> => ({
  parse: (entity, body) => parseIdOnly(entity.family, body),
  run: (entity, ctx, { id }) => call(familyOf(entity), ctx, id),
});
