import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexPrefixes, matchesQuery, normalize, parseQuery, phoneSuffixes, prefixFor, recordWords, words } from '../../shared/search/tokenize.js';

const wordChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzéèüñçø0123456789ABCDÉ'.split(''));
const word = fc.array(wordChars, { minLength: 1, maxLength: 12 }).map((a) => a.join(''));
const sep = fc.constantFrom(' ', '-', '.', "'", '@', ', ', '_', '/');
const text = fc.array(fc.tuple(word, sep), { minLength: 1, maxLength: 6 }).map((parts) => parts.map(([w, s]) => w + s).join(''));

describe('search tokenizer', () => {
  it('splits at every character that is not a letter or digit, case- and accent-insensitively', () => {
    expect(words("José O'Brien-Smith")).toEqual(['jose', 'o', 'brien', 'smith']);
    expect(words('ÅNGSTRÖM Ça')).toEqual(['angstrom', 'ca']);
  });

  it('reads phone digits from every digit group onward', () => {
    expect(phoneSuffixes('+1 (555) 123-4567')).toEqual(['15551234567', '5551234567', '1234567', '4567']);
  });

  it('matches the contract examples', () => {
    const contact = recordWords({ text: ['José', 'Smith', 'Acme Corp'], emails: ['jose.smith@acme.com'], phones: ['+1 (555) 123-4567'] });
    const hit = (q: string) => matchesQuery(contact, parseQuery(q)!);
    expect(hit('jos')).toBe(true);
    expect(hit('JOSE smi')).toBe(true);
    expect(hit('josé')).toBe(true);
    expect(hit('acme')).toBe(true);
    expect(hit('5551234')).toBe(true);
    expect(hit('(555) 123')).toBe(true);
    expect(hit('1234567')).toBe(true);
    expect(hit('jose.smith@acme.com')).toBe(true);
    expect(hit('mith')).toBe(false);
    expect(hit('jose brown')).toBe(false);
    expect(hit('5559')).toBe(false);
    expect(parseQuery('   ')).toBeUndefined();
  });

  it('property: every prefix of every word of a record finds the record', () => {
    fc.assert(
      fc.property(text, fc.nat(), fc.integer({ min: 1, max: 12 }), (t, pick, len) => {
        const ws = words(t);
        fc.pre(ws.length > 0);
        const w = ws[pick % ws.length]!;
        const q = [...w].slice(0, len).join('');
        expect(matchesQuery(recordWords({ text: [t] }), parseQuery(q)!)).toBe(true);
      }),
    );
  });

  it('property: a query word that is no prefix of any record word never matches', () => {
    fc.assert(
      fc.property(text, word, (t, q) => {
        const rw = recordWords({ text: [t] });
        const nq = words(q);
        fc.pre(nq.length === 1 && ![...rw].some((w) => w.startsWith(nq[0]!)) && !/^\d{3,}$/.test(nq[0]!));
        expect(matchesQuery(rw, parseQuery(q)!)).toBe(false);
      }),
    );
  });

  it('property: the partition a query reads always holds every record it can match', () => {
    fc.assert(
      fc.property(text, fc.nat(), fc.integer({ min: 3, max: 12 }), (t, pick, len) => {
        const rw = recordWords({ text: [t] });
        const ws = [...rw];
        const w = ws[pick % ws.length]!;
        fc.pre([...w].length >= 3);
        const q = [...w].slice(0, len).join('');
        expect(indexPrefixes(rw).has(prefixFor(q)!)).toBe(true);
      }),
    );
  });

  it('property: normalize is idempotent and lowercases', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(normalize(normalize(s))).toBe(normalize(s));
      }),
    );
  });
});
