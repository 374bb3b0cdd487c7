/**
 * lib/jmespath-fields.ts stands in for the JMESPath engine inside Lambda bundles: for every field
 * path it must answer as the real engine does, and it must refuse every other expression.
 */
import { search as realSearch } from '@aws-lambda-powertools/jmespath';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { search } from '../../lib/jmespath-fields.js';

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/);
const names = fc.array(fc.constantFrom('scope', 'body', 'a', 'b', '_x'), { minLength: 0, maxLength: 3 });

/** JSON values whose objects often have the names the paths ask for. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string(),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.constantFrom('scope', 'body', 'a', 'b', '_x'), fc.string()), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('the bundled field-path JMESPath (lib/jmespath-fields.ts)', () => {
  it('answers every field path as the real engine does', () => {
    fc.assert(
      fc.property(fc.tuple(name, names).map(([first, rest]) => [first, ...rest].join('.')), json, (path, data) => {
        expect(search(path, data)).toEqual(realSearch(path, data as never));
      }),
      { numRuns: 2_000 },
    );
  });

  it('answers the service\'s own expressions (shared/http/idempotency.ts) as the real engine does', () => {
    const call = { scope: { accountId: 'acc', operation: 'contacts-create', key: 'k-1' }, body: { first_name: 'Ada', tags: ['a'], nested: { x: null } } };
    for (const path of ['scope', 'body']) expect(search(path, call)).toEqual(realSearch(path, call));
    expect(search('body', { scope: {} })).toBeNull();
  });

  it('refuses what is not a field path, rather than reading it wrongly', () => {
    for (const expression of ['', 'a[0]', 'a.*', 'powertools_json(body)', 'a || b', '"quoted"', 'a..b', '.a', 'a.', '1a', '@', 'a | b']) {
      expect(() => search(expression, { a: 1 }), expression).toThrow(/not a field path/);
    }
  });
});
