import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { companyEntity as companyBody, contactEntity as contactBody } from '../../shared/schemas/entities/index.js';
import { ApiError, statusForCode } from '../../shared/errors.js';
import { emailString, httpUrlString, tagList } from '../../shared/schemas/common.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';
import { valueSchema } from '../../shared/domain/custom-fields.js';

describe('field rules', () => {
  it('property: tags are trimmed, de-duplicated in first order, and capped at 50', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 70 }), (tags) => {
        const out = v.safeParse(tagList, tags);
        const trimmed = tags.map((t) => t.trim());
        const expected = [...new Set(trimmed)];
        if (trimmed.some((t) => t === '') || expected.length > 50) expect(out.success).toBe(false);
        else {
          expect(out.success).toBe(true);
          expect(out.output).toEqual(expected);
        }
      }),
    );
  });

  it('accepts empty or valid emails only', () => {
    for (const ok of ['', 'a@b.co', 'first.last+tag@example.com']) expect(v.is(emailString, ok)).toBe(true);
    for (const bad of ['a', 'a@', '@b.com', 'a@b', 'a b@c.com', `${'x'.repeat(250)}@b.com`]) expect(v.is(emailString, bad)).toBe(false);
  });

  it('accepts empty or http(s) URLs only', () => {
    for (const ok of ['', 'https://acme.com', 'http://acme.com/x?y=1']) expect(v.is(httpUrlString, ok)).toBe(true);
    for (const bad of ['acme.com', 'ftp://acme.com', 'javascript:alert(1)', `https://a.com/${'x'.repeat(2048)}`]) expect(v.is(httpUrlString, bad)).toBe(false);
  });

  it('validates custom field values per type', () => {
    const cases: Array<[Parameters<typeof valueSchema>[0], unknown[], unknown[]]> = [
      [{ field_type: 'text', options: [] }, ['', 'x'], [1, null, 'x'.repeat(10_001)]],
      [{ field_type: 'number', options: [] }, [0, -1.5, 1e9], ['1', Number.NaN, Number.POSITIVE_INFINITY]],
      [{ field_type: 'boolean', options: [] }, [true, false], ['true', 0]],
      [{ field_type: 'date', options: [] }, ['2024-02-29', '1999-12-31'], ['2023-02-29', '2024-13-01', '2024-1-1', '2024-01-01T00:00:00Z']],
      [{ field_type: 'datetime', options: [] }, ['2026-11-22T01:16:30.123Z', '2026-11-22T01:16:30+02:00'], ['2026-11-22', 'yesterday', '2026-02-30T00:00:00Z']],
      [{ field_type: 'url', options: [] }, ['https://a.com'], ['a.com', 'mailto:x@y.z']],
      [{ field_type: 'email', options: [] }, ['a@b.co'], ['', 'nope']],
      [{ field_type: 'select', options: ['a', 'b'] }, ['a'], ['c', ['a']]],
      [{ field_type: 'multi_select', options: ['a', 'b'] }, [[], ['a', 'b']], [['a', 'a'], ['c'], 'a']],
    ];
    for (const [def, good, bad] of cases) {
      for (const g of good) expect(v.is(valueSchema(def), g), `${def.field_type} ${JSON.stringify(g)}`).toBe(true);
      for (const b of bad) expect(v.is(valueSchema(def), b), `${def.field_type} ${JSON.stringify(b)}`).toBe(false);
    }
  });

  it('property: any JSON body gets a contract error or a parsed input, never anything else', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('first_name', 'name', 'email', 'tags', 'id', 'company_name', 'zzz', 'employee_count', 'website'), fc.jsonValue()), fc.constantFrom('create', 'update'), (body, mode) => {
        for (const spec of [contactBody, companyBody]) {
          try {
            parseRecordBody(spec as never, body as Record<string, unknown>, mode as 'create' | 'update');
          } catch (error) {
            expect(error).toBeInstanceOf(ApiError);
            const e = error as ApiError;
            expect(e.code.startsWith(`${spec.family}.`)).toBe(true);
            expect(e.status).toBe(400);
          }
        }
      }),
    );
  });

  it('maps codes to the contract statuses', () => {
    expect(statusForCode('contacts.invalid_request')).toBe(400);
    expect(statusForCode('contacts.first_name_required')).toBe(400);
    expect(statusForCode('contacts.invalid_cursor')).toBe(400);
    expect(statusForCode('auth.unauthorized')).toBe(401);
    expect(statusForCode('companies.not_found')).toBe(404);
    expect(statusForCode('api.unknown_operation')).toBe(404);
    expect(statusForCode('api.method_not_allowed')).toBe(405);
    expect(statusForCode('contacts.conflict')).toBe(409);
    expect(statusForCode('api.payload_too_large')).toBe(413);
    expect(statusForCode('api.rate_limited')).toBe(429);
    expect(statusForCode('webhooks.internal')).toBe(500);
  });
});
