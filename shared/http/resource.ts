/**
 * A handler from a resource definition: the operation's name, family and parse come from its
 * declaration (shared/schemas/resource.ts), so a handler file is one line:
 * `export const handler = handle(webhooksResource, 'rotate-secret', (input, ctx) => rotateSecret(ctx, input));`
 */
import { type InputOfOp, type OperationDecl, operationName, parseOperation, type ResourceDefinition } from '../schemas/resource.js';
import { type OperationContext, operation, type RunWrapper } from './operation.js';

export function handle<Ops extends Record<string, OperationDecl<unknown>>, V extends keyof Ops & string, R>(
  def: ResourceDefinition<Ops>,
  verb: V,
  run: (input: InputOfOp<Ops[V]>, ctx: OperationContext) => Promise<R>,
  opts: { wrap?: RunWrapper } = {},
) {
  const op = def.operations[verb]!;
  return operation({
    name: operationName(def, verb),
    family: def.family,
    access: op.access,
    wrap: opts.wrap,
    parse: (body) => parseOperation(def.family, op, body) as InputOfOp<Ops[V]>,
    run,
  });
}
