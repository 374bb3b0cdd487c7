import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../shared/db/cursor.js';

const key = Buffer.from('unit-test-key');
const scope = fc.record({
  accountId: fc.uuid(),
  operation: fc.constantFrom('contacts-list', 'companies-list', 'sources-list'),
  filters: fc.record({ tags: fc.array(fc.string(), { maxLength: 3 }), search: fc.string({ maxLength: 10 }) }),
});
const position = fc.tuple(fc.date({ noInvalidDate: true }), fc.uuid()).map(([d, id]) => `${d.toISOString()}#${id}`);

describe('cursor codec', () => {
  it('property: round-trips the position within its scope', () => {
    fc.assert(fc.property(position, scope, (p, s) => {
        expect(decodeCursor(encodeCursor(p, s, key), s, key)).toBe(p);
      }));
  });

  it('property: any change to the cursor makes it invalid', () => {
    fc.assert(
      fc.property(position, scope, fc.nat(), fc.constantFrom(...'ABCxyz019-_.'.split('')), (p, s, at, ch) => {
        const c = encodeCursor(p, s, key);
        const i = at % c.length;
        fc.pre(c[i] !== ch);
        const tampered = c.slice(0, i) + ch + c.slice(i + 1);
        expect(decodeCursor(tampered, s, key)).toBeUndefined();
      }),
    );
  });

  it('property: a cursor is invalid for another account, operation or filter', () => {
    fc.assert(
      fc.property(position, scope, scope, (p, s1, s2) => {
        fc.pre(JSON.stringify(s1) !== JSON.stringify(s2));
        expect(decodeCursor(encodeCursor(p, s1, key), s2, key)).toBeUndefined();
      }),
    );
  });

  it('rejects garbage and cursors signed with another key', () => {
    const s = { accountId: 'a', operation: 'contacts-list', filters: {} };
    expect(decodeCursor('', s, key)).toBeUndefined();
    expect(decodeCursor('not-a-cursor', s, key)).toBeUndefined();
    expect(decodeCursor('a.b.c', s, key)).toBeUndefined();
    expect(decodeCursor(encodeCursor('x', s, Buffer.from('other')), s, key)).toBeUndefined();
  });
});
