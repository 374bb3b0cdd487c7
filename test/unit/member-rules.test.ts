/**
 * The order of members-list (contract §20): a member's sort key (`memberNameKey`) orders members
 * by their folded name (case- and accent-insensitively), then id, compared as DynamoDB compares
 * sort keys (UTF-8 bytes), and always fits a sort key; an address's claim key ignores case. An
 * account's limit is the contract's 1,000 unless CRM_MEMBER_LIMIT lowers it (never raises it).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { memberLimit } from '../../shared/config/env.js';
import { compareSortKeys, MAX_MEMBERS, memberEmailKey, memberNameKey } from '../../shared/schemas/members.js';
import { normalize } from '../../shared/search/tokenize.js';

const name = fc.oneof(
  fc.array(fc.constantFrom('a', 'A', 'á', 'Å', 'e', 'É', 'ë', 'b', 'z', 'Z', ' ', 'ß', 'ø', '日', '😀', 'ﷺ', '\u0000', '\u0001', '\u0002'), { minLength: 1, maxLength: 8 }).map((cs) => cs.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
);
const id = fc.uuid();

describe('member rules', () => {
  it('orders by folded name, then id, and the key fits a sort key', () => {
    fc.assert(
      fc.property(name, id, name, id, (n1, id1, n2, id2) => {
        const [k1, k2] = [memberNameKey(n1, id1), memberNameKey(n2, id2)];
        expect(Buffer.byteLength(k1)).toBeLessThanOrEqual(1024);
        expect(k1.endsWith(`\u0001${id1}`)).toBe(true);
        const [f1, f2] = [k1.slice(0, -37), k2.slice(0, -37)];
        const byName = compareSortKeys(f1, f2);
        if (byName !== 0 && !f1.startsWith(f2) && !f2.startsWith(f1)) expect(Math.sign(compareSortKeys(k1, k2))).toBe(Math.sign(byName));
        if (f1 === f2) expect(Math.sign(compareSortKeys(k1, k2))).toBe(Math.sign(compareSortKeys(id1, id2)));
        // a name that is a prefix of another sorts first ("Ann" before "Anne")
        if (f1 !== f2 && f2.startsWith(f1)) expect(compareSortKeys(k1, k2)).toBeLessThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('folds case and accents: the same name in another case or with accents has the same place before its id', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'e', 'o', 'n', ' '), { minLength: 1, maxLength: 10 }).map((cs) => cs.join('')), id, (plain, i) => {
        const loud = plain.toUpperCase().replace(/E/g, 'É').replace(/O/g, 'Ö');
        if (!plain.trim()) return;
        expect(memberNameKey(loud, i)).toBe(memberNameKey(plain, i));
        expect(memberNameKey(` ${plain} `, i)).toBe(`${normalize(plain.trim())}\u0001${i}`);
      }),
    );
  });

  it('compares sort keys by UTF-8 bytes, not UTF-16 code units', () => {
    // U+FF5E (3 bytes, 0xEF…) sorts before U+1F600 (4 bytes, 0xF0…), though its UTF-16 unit is higher than a surrogate's
    expect(compareSortKeys('\uFF5E', '😀')).toBeLessThan(0);
    expect('\uFF5E' < '😀').toBe(false);
  });

  it('claims an address case-insensitively, trimmed', () => {
    fc.assert(
      fc.property(fc.emailAddress(), (email) => {
        expect(memberEmailKey(` ${email.toUpperCase()} `)).toBe(memberEmailKey(email));
      }),
    );
  });

  describe('the limit of members per account', () => {
    const saved = process.env.CRM_MEMBER_LIMIT;
    afterEach(() => {
      if (saved === undefined) delete process.env.CRM_MEMBER_LIMIT;
      else process.env.CRM_MEMBER_LIMIT = saved;
    });

    it('is the contract\'s 1,000 by default', () => {
      delete process.env.CRM_MEMBER_LIMIT;
      expect(MAX_MEMBERS).toBe(1000);
      expect(memberLimit(MAX_MEMBERS)).toBe(1000);
    });

    it('can be lowered by CRM_MEMBER_LIMIT, never raised, and ignores a value that is not a positive integer', () => {
      for (const [value, limit] of [['20', 20], ['1', 1], ['1000', 1000], ['1001', 1000], ['100000', 1000], ['0', 1000], ['-5', 1000], ['2.5', 1000], ['x', 1000], ['', 1000]] as const) {
        process.env.CRM_MEMBER_LIMIT = value;
        expect(memberLimit(MAX_MEMBERS), value).toBe(limit);
      }
    });
  });
});
