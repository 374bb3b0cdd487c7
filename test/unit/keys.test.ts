import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTableInput, keys, orderKey, TABLE_DEFINITION } from '../../shared/db/table.js';
import { readRepoFile, tsFilesUnder } from '../helpers/source-files.js';

describe('key builders', () => {
  it('property: every account-scoped key starts with the account, so accounts never share a partition', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.uuid(), fc.string({ minLength: 1, maxLength: 20 }), (a, b, id, name) => {
        fc.pre(a !== b);
        const ofA = [keys.record(a, 'contact', id).pk, keys.indexPartition(a, 'contact', name), keys.listPartition(a, 'company'), keys.accountMeta(a).pk, keys.customFieldPartition(a)];
        const ofB = [keys.record(b, 'contact', id).pk, keys.indexPartition(b, 'contact', name), keys.listPartition(b, 'company'), keys.accountMeta(b).pk, keys.customFieldPartition(b)];
        for (const k of ofA) expect(k.startsWith(`A#${a}`)).toBe(true);
        for (const k of ofA) expect(ofB).not.toContain(k);
      }),
    );
  });

  it('property: a derived builder puts its arguments in verbatim, even ones that look like placeholders', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat({ max: 999_999_999 }), (a, id, row) => {
        expect(keys.webhookEndpoint(a, id)).toEqual({ pk: `A#${a}#wh`, sk: id });
        expect(keys.importError(a, id, row)).toEqual({ pk: `A#${a}#imp#${id}`, sk: `E#${String(row).padStart(9, '0')}` });
        expect(keys.inboundEmailGsi(a, `{createdAt}${id}`, '{id}')).toEqual({ gsi1pk: `A#${a}#ie`, gsi1sk: `{createdAt}${id}#{id}` });
      }),
    );
  });

  it('sorts index entries and the GSI by created_at then id', () => {
    const e = keys.indexEntry('acc', 'contact', 't#vip', '2026-01-01T00:00:00.000Z', 'id-1');
    const g = keys.recordGsi('acc', 'contact', '2026-01-01T00:00:00.000Z', 'id-1');
    expect(e.sk).toBe(g.gsi1sk);
    // The sort key orders like (created_at, id): a later millisecond wins over any id.
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }), fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }), fc.uuid(), fc.uuid(), (d1, d2, a, b) => {
        const k1 = orderKey(d1.toISOString(), a);
        const k2 = orderKey(d2.toISOString(), b);
        const expected = d1.getTime() !== d2.getTime() ? d1.getTime() > d2.getTime() : a > b;
        expect(k1 > k2).toBe(expected);
      }),
    );
  });

  it('builds CreateTable input from the one table definition', () => {
    const input = createTableInput('crm');
    expect(input.KeySchema.map((k) => k.AttributeName)).toEqual([TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey]);
    expect(input.GlobalSecondaryIndexes[0]!.IndexName).toBe(TABLE_DEFINITION.gsi1.name);
    expect(input.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('spells key strings only in the key declarations (shared/schemas/keys/)', () => {
    const keyString = /[`'"](A#|TOKEN#|IDEMP#|WHDUE#|INBOUND#|IMPORTS#|EXPORTS#|SYSTEM['`])|\$\{acct\(/;
    const offenders = ['shared', 'functions', 'local', 'lib']
      .flatMap(tsFilesUnder)
      .filter((f) => !f.startsWith(join('shared', 'schemas', 'keys')))
      .filter((f) => {
        const code = readRepoFile(f)
          .split('\n')
          .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
          .join('\n');
        return keyString.test(code);
      });
    expect(offenders).toEqual([]);
  });
});
