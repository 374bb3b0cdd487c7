/**
 * Stands in for `@aws-lambda-powertools/jmespath` inside Lambda bundles (esbuild alias, see
 * lib/bundling.ts). Powertools idempotency evaluates two expressions of ours with it, `scope`
 * (the record's name) and `body` (the payload it validates): plain field paths
 * (shared/http/idempotency.ts). The full engine (lexer, parser, interpreter and the built-in
 * functions) is ~23 KB minified in every idempotent create; this module evaluates field paths
 * (`a`, `a.b.c`) exactly as JMESPath does, a field of anything but an object, or a missing
 * one, being `null`, and throws on every other expression, so a richer expression fails loudly
 * in the bundle instead of being read wrongly. test/unit/jmespath-fields.test.ts holds it to the
 * real engine. Local mode, tests and the admin commands keep the real module.
 */
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

const field = (value: unknown, name: string): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, name) ? ((value as Record<string, unknown>)[name] ?? null) : null;

/** As `search` of `@aws-lambda-powertools/jmespath`, for field paths only. */
export function search(expression: string, data: unknown): unknown {
  if (!FIELD_PATH.test(expression)) {
    throw new Error(`JMESPath expression "${expression}" is not a field path; only field paths are bundled (lib/jmespath-fields.ts)`);
  }
  return expression.split('.').reduce(field, data);
}

/** As in `@aws-lambda-powertools/jmespath/functions`: IdempotencyConfig's default custom functions (none are callable here). */
export class PowertoolsFunctions {}
