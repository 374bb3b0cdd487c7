import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { activityEntity, contactEntity, projectEntity } from '../../shared/schemas/entities/index.js';
import { compareSort, entityFilterFields, type Filter, type FilterField, instantKey, matchesFilter, parseFilter, parseSort, sortKeyOf, sortPosition } from '../../shared/schemas/filter.js';
import { sortedRanges } from '../../shared/db/lists.js';
import { sortedKeyOf } from '../../shared/db/record-model.js';

const fields: Record<string, FilterField> = {
  name: { type: 'text' },
  n: { type: 'number' },
  at: { type: 'datetime' },
  day: { type: 'date' },
  ok: { type: 'boolean' },
  st: { type: 'enum', values: ['open', 'closed'] },
  tags: { type: 'set' },
  ref: { type: 'id' },
};
const fieldOf = (f: string) => fields[f];
const m = (filter: Filter, rec: Record<string, unknown>) => matchesFilter(filter, fields, (f) => rec[f]);

describe('filter types from the declarations', () => {
  it('gives each entity field its §17 type', () => {
    const c = entityFilterFields(contactEntity);
    expect(c.first_name?.type).toBe('text');
    expect(c.company_name?.type).toBe('text');
    expect(c.company_id?.type).toBe('id');
    expect(c.tags?.type).toBe('set');
    expect(c.created_at?.type).toBe('datetime');
    expect(c.account_id).toBeUndefined();
    expect(c.custom_fields).toBeUndefined();
    const p = entityFilterFields(projectEntity);
    expect([p.status?.type, p.amount?.type, p.due_date?.type, p.contact_ids]).toEqual(['enum', 'number', 'date', { type: 'set', ids: true }]);
    const a = entityFilterFields(activityEntity);
    expect([a.completed?.type, a.due_at?.type, a.direction?.type, a.occurred_at?.type]).toEqual(['boolean', 'datetime', 'enum', 'datetime']);
  });
});

describe('parseFilter', () => {
  it('reports each problem with its path', () => {
    const { errors } = parseFilter({ and: [{ field: 'n', op: 'gt', value: 'x' }, { or: [{ field: 'name', op: 'between', value: ['a', 'b'] }] }, { field: 'st', op: 'in', value: ['open', 'nope'] }] }, fieldOf);
    expect(errors.map((e) => e.path)).toEqual(['filter.and[0].value', 'filter.and[1].or[0].op', 'filter.and[2].value[1]']);
  });
  it('counts levels and conditions', () => {
    const c = { field: 'n', op: 'eq', value: 1 };
    expect(parseFilter({ and: [{ or: [{ not: c }] }] }, fieldOf).errors).toEqual([]);
    expect(parseFilter({ and: [{ or: [{ not: { not: c } }] }] }, fieldOf).errors[0]?.message).toMatch(/4 levels/);
    expect(parseFilter({ and: Array.from({ length: 20 }, () => c) }, fieldOf).errors).toEqual([]);
    expect(parseFilter({ and: [{ and: Array.from({ length: 20 }, () => c) }, c] }, fieldOf).errors[0]?.path).toBe('filter');
    expect(parseFilter({ and: Array.from({ length: 21 }, () => c) }, fieldOf).errors[0]?.path).toBe('filter.and');
  });
  it('lower-cases ids', () => {
    expect(parseFilter({ field: 'ref', op: 'eq', value: 'AAAAAAAA-1111-4111-8111-111111111111' }, fieldOf).filter).toEqual({ field: 'ref', op: 'eq', value: 'aaaaaaaa-1111-4111-8111-111111111111' });
  });
  it('sorts only scalar fields', () => {
    expect(parseSort({ field: 'tags' }, fieldOf).error).toMatch(/set field/);
    expect(parseSort({ field: 'ref', direction: 'asc' }, fieldOf).error).toMatch(/id field/);
    expect(parseSort({ field: 'day' }, fieldOf).sort).toEqual({ field: 'day', direction: 'asc' });
  });
});

describe('matchesFilter (contract §17 meaning)', () => {
  it('text ignores case and accents; prefix is of the whole value', () => {
    expect(m({ field: 'name', op: 'eq', value: 'elodie' }, { name: 'Élodie' })).toBe(true);
    expect(m({ field: 'name', op: 'prefix', value: 'ÉLO' }, { name: 'elodie martin' })).toBe(true);
    expect(m({ field: 'name', op: 'prefix', value: 'mar' }, { name: 'elodie martin' })).toBe(false);
  });
  it('datetimes compare as instants; between is half-open for datetimes, closed for numbers and dates', () => {
    expect(m({ field: 'at', op: 'eq', value: '2026-01-01T12:00:00+02:00' }, { at: '2026-01-01T10:00:00.000Z' })).toBe(true);
    expect(m({ field: 'at', op: 'between', value: ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'] }, { at: '2026-01-02T00:00:00.000Z' })).toBe(false);
    expect(m({ field: 'n', op: 'between', value: [1, 2] }, { n: 2 })).toBe(true);
    expect(m({ field: 'day', op: 'between', value: ['2026-01-01', '2026-01-31'] }, { day: '2026-01-31' })).toBe(true);
    expect(instantKey('2026-01-01T00:00:00.0000001Z')! > instantKey('2026-01-01T00:00:00Z')!).toBe(true);
    expect(instantKey('1960-01-01T00:00:00Z')! < instantKey('1970-01-01T00:00:00Z')!).toBe(true);
  });
  it('neq, nin, not_exists and not are complements; ranges never match empty values', () => {
    const value = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer({ min: -3, max: 3 }));
    fc.assert(
      fc.property(value, fc.integer({ min: -3, max: 3 }), (n, x) => {
        const rec = { n };
        expect(m({ field: 'n', op: 'neq', value: x }, rec)).toBe(!m({ field: 'n', op: 'eq', value: x }, rec));
        expect(m({ field: 'n', op: 'nin', value: [x] }, rec)).toBe(!m({ field: 'n', op: 'in', value: [x] }, rec));
        expect(m({ not: { field: 'n', op: 'gt', value: x } }, rec)).toBe(!m({ field: 'n', op: 'gt', value: x }, rec));
        expect(m({ field: 'n', op: 'not_exists' }, rec)).toBe(!m({ field: 'n', op: 'exists' }, rec));
        if (n === null || n === undefined) for (const op of ['lt', 'lte', 'gt', 'gte'] as const) expect(m({ field: 'n', op, value: x }, rec)).toBe(false);
      }),
    );
    expect(m({ field: 'tags', op: 'exists' }, { tags: [] })).toBe(false);
    expect(m({ field: 'tags', op: 'contains_all', value: ['a', 'b'] }, { tags: ['b', 'a', 'c'] })).toBe(true);
    expect(m({ field: 'ok', op: 'eq', value: false }, { ok: undefined })).toBe(false);
  });
});

describe('compareSort', () => {
  it('puts empty values last in both directions and breaks ties by id in the same direction', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ v: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }), id: fc.uuid() }), { maxLength: 30 }), fc.constantFrom('asc' as const, 'desc' as const), (rows, dir) => {
        const sorted = rows.map((r) => sortPosition('number', r.v, r.id)).sort((a, b) => compareSort(a, b, dir));
        const firstEmpty = sorted.findIndex((p) => p[0] === null);
        if (firstEmpty >= 0) expect(sorted.slice(firstEmpty).every((p) => p[0] === null)).toBe(true);
        for (let i = 1; i < sorted.length; i++) {
          const [a, b] = [sorted[i - 1]!, sorted[i]!];
          if (a[0] === b[0]) expect(dir === 'asc' ? a[1] <= b[1] : a[1] >= b[1]).toBe(true);
          else if (a[0] !== null && b[0] !== null) expect(dir === 'asc' ? a[0] < b[0] : a[0] > b[0]).toBe(true);
        }
      }),
    );
  });
});

describe('sort-ordered entry keys (contract §17)', () => {
  const sign = (x: number) => (x < 0 ? -1 : x > 0 ? 1 : 0);
  const cmpStr = (a: string, b: string) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));
  it('orders numbers (negatives, fractions, extremes), datetimes with offsets and folded text as their values, byte-wise as DynamoDB compares', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ noNaN: true, noDefaultInfinity: true }), (a, b) => {
        expect(sign(cmpStr(sortKeyOf('number', a)!, sortKeyOf('number', b)!))).toBe(a === b ? 0 : sign(a - b));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.date({ min: new Date(-1e14), max: new Date(1e14), noInvalidDate: true }), fc.date({ min: new Date(-1e14), max: new Date(1e14), noInvalidDate: true }), fc.integer({ min: -12, max: 12 }), (a, b, h) => {
        const withOffset = (d: Date) => new Date(d.getTime() + h * 3_600_000).toISOString().replace('Z', `${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`);
        expect(sign(cmpStr(sortKeyOf('datetime', withOffset(a))!, sortKeyOf('datetime', b.toISOString())!))).toBe(sign(a.getTime() - b.getTime()));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 1 }), fc.string({ unit: 'grapheme-ascii', minLength: 1 }), (a, b) => {
        const [x, y] = [sortPosition('text', a, 'i'), sortPosition('text', b, 'i')];
        if (x[0] !== y[0]) expect(sign(cmpStr(sortedKeyOf('text', a, 'i'), sortedKeyOf('text', b, 'i')))).toBe(sign(compareSort(x, y, 'asc')));
      }),
      { numRuns: 300 },
    );
    expect(sortKeyOf('text', 'Élodie')).toBe(sortKeyOf('text', 'ELODIE'));
    expect(sortKeyOf('text', '')).toBeUndefined();
    expect(sortKeyOf('number', null)).toBeUndefined();
    // Empty values sort after every value; ties by id.
    expect(cmpStr(sortedKeyOf('number', 1e300, 'b'), sortedKeyOf('number', null, 'a'))).toBeLessThan(0);
    expect(cmpStr(sortedKeyOf('text', 'x', 'a'), sortedKeyOf('text', 'x', 'b'))).toBeLessThan(0);
  });

  it('bounds a condition by ranges that hold every matching key and no key of an empty value', () => {
    const values = [-3, -0.5, 0, 2, 2.5, 10, null];
    const conds: Array<{ op: string; value: unknown; holds: (x: number) => boolean }> = [
      { op: 'eq', value: 2, holds: (x) => x === 2 },
      { op: 'in', value: [10, -3], holds: (x) => x === 10 || x === -3 },
      { op: 'gt', value: 0, holds: (x) => x > 0 },
      { op: 'lte', value: 2, holds: (x) => x <= 2 },
      { op: 'between', value: [-1, 2.5], holds: (x) => x >= -1 && x <= 2.5 },
    ];
    for (const c of conds) {
      const ranges = sortedRanges('number', { field: 'n', op: c.op as 'eq', value: c.value });
      const inRange = (k: string) => ranges.some((r) => cmpStr(k, r.from) >= 0 && cmpStr(k, r.to) <= 0);
      for (const v of values) {
        const k = sortedKeyOf('number', v, '00000000-0000-4000-8000-000000000000');
        if (v === null) expect(inRange(k)).toBe(false);
        else if (c.holds(v)) expect(inRange(k)).toBe(true);
      }
    }
  });
});
