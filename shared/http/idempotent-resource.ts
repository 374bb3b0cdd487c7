/**
 * The handler of an operation of a resource definition declared `idempotent`
 * (shared/schemas/resource.ts): `handle` of resource.ts, applying the idempotency its declaration
 * asks for (the middleware of `idempotencyOf`, idempotency.ts). A handler file is the same one line and never says it:
 * `export const handler = handle(exportsResource, 'create', (input, ctx) => createExport(ctx, input));`
 *
 * Apart from resource.ts so that the other operations' bundles do not carry Powertools
 * idempotency (~22 KB). Only an idempotent verb is accepted here, and only the others there
 * (typecheck fails otherwise); test/integration/idempotent-creates.test.ts calls every operation
 * declared idempotent with a key. The record families' idempotent handlers: idempotent-records.ts.
 */
import type { InputOfOp, OperationDecl, ResourceDefinition } from '../schemas/resource.js';
import { idempotencyOf, type ResultSeal } from './idempotency.js';
import type { OperationContext } from './operation.js';
import { declaredOperation, type IdempotentVerb } from './resource.js';

/** `seal`: how the stored result keeps a secret encrypted (webhooks-create). */
export function handle<Ops extends Record<string, OperationDecl<unknown>>, V extends IdempotentVerb<Ops>, R>(
  def: ResourceDefinition<Ops>,
  verb: V,
  run: (input: InputOfOp<Ops[V]>, ctx: OperationContext) => Promise<R>,
  opts: { seal?: ResultSeal<R> } = {},
) {
  return declaredOperation(def, verb, run, idempotencyOf(def.operations[verb]!, opts.seal));
}
