/**
 * A handler from a resource definition: the operation's name, family, access, parse and
 * idempotency come from its declaration (shared/schemas/resource.ts), so a handler file is one line:
 * `export const handler = handle(webhooksResource, 'rotate-secret', (input, ctx) => rotateSecret(ctx, input));`
 *
 * An operation declared `idempotent` takes `handle` of idempotent-resource.ts instead (the same
 * call), which applies the idempotency its declaration asks for: apart, so that the other
 * operations' bundles do not carry Powertools idempotency (~22 KB). This `handle` does not accept
 * an idempotent verb (typecheck fails), and test/integration/idempotent-creates.test.ts calls every
 * operation declared idempotent with a key.
 */
import { type InputOfOp, type OperationDecl, operationName, parseOperation, type ResourceDefinition } from '../schemas/resource.js';
import { type OperationContext, type OperationMiddleware, operation } from './operation.js';

/** The verbs of a definition whose declaration says `idempotent: true`. */
export type IdempotentVerb<Ops> = { [V in keyof Ops & string]: Ops[V] extends { idempotent: true } ? V : never }[keyof Ops & string];

/**
 * The operation of a declaration: name, family, access and parse from it, and the middlewares its
 * declaration asks for (`use`: idempotency, given by idempotent-resource.ts).
 */
export function declaredOperation<Ops extends Record<string, OperationDecl<unknown>>, V extends keyof Ops & string, R>(
  def: ResourceDefinition<Ops>,
  verb: V,
  run: (input: InputOfOp<Ops[V]>, ctx: OperationContext) => Promise<R>,
  use: readonly OperationMiddleware<R>[] = [],
) {
  const op = def.operations[verb]!;
  return operation({
    name: operationName(def, verb),
    family: def.family,
    access: op.access,
    idempotent: op.idempotent,
    use,
    parse: (body) => parseOperation(def.family, op, body) as InputOfOp<Ops[V]>,
    run,
  });
}

/** The handler of an operation not declared `idempotent` (its verb is not accepted otherwise). */
export function handle<Ops extends Record<string, OperationDecl<unknown>>, V extends Exclude<keyof Ops & string, IdempotentVerb<Ops>>, R>(
  def: ResourceDefinition<Ops>,
  verb: V,
  run: (input: InputOfOp<Ops[V]>, ctx: OperationContext) => Promise<R>,
) {
  return declaredOperation(def, verb, run);
}
