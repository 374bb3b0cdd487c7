/**
 * The body depth check (shared/http/operation.ts nestsDeeperThan): one scan of the JSON text
 * gives what a walk of the parsed value gives, whatever the strings hold (quotes, backslashes,
 * brackets), and it takes a text no recursive walk would survive.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../shared/http/operation.js';

/** Levels of objects and arrays of a parsed value (a scalar is 0). */
const depthOf = (value: unknown): number =>
  value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value as object).map(depthOf)) : 0;

/** Strings full of what could fool a scan: quotes, backslashes and brackets. */
const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', 'ü', '\n') });
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tricky, fc.integer(), fc.constant(null), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(tricky, tie('node'), { maxKeys: 3 })),
})).node;

describe('nestsDeeperThan', () => {
  it('agrees with the depth of the parsed value, for every limit', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, max) => {
        const text = JSON.stringify(v);
        expect(nestsDeeperThan(text, max)).toBe(depthOf(JSON.parse(text)) > max);
      }),
      { numRuns: 2000, seed: 64 },
    );
  });

  it('scans a body of 100,000 levels without recursion', () => {
    expect(nestsDeeperThan(`{"items":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`, 64)).toBe(true);
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100_000)}"}`, 64)).toBe(false);
  });
});
