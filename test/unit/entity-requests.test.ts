/**
 * Offline tests of the DynamoDB requests the entity definitions generate (keys, index entries,
 * condition and update expressions), beside the connected tests against DynamoDB Local.
 */
import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../../shared/db/items.js';
import { type EntityModel, newRecordItems, planUpdate } from '../../shared/db/writes.js';
import { indexNamesOf, searchNamesOf, sortedEntriesOf } from '../../shared/db/record-model.js';
import { instantKey, sortKeyOf } from '../../shared/schemas/filter.js';
import { activityEntity, companyEntity, contactEntity, type EntityDefinition, projectEntity } from '../../shared/schemas/entities/index.js';

process.env.TABLE_NAME ??= 'crm-offline';
const ACC = '00000000-0000-4000-8000-000000000001';
const CO = '9b2f8a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
const K1 = '3e4d5c6b-7a8f-4e9d-8c7b-6a5f4e3d2c1b';
const NOW = '2026-11-22T01:16:30.123Z';

describe('index entries derived from the definitions', () => {
  it('contacts: tags, company and source references, exact email, search prefixes', () => {
    const names = indexNamesOf(contactEntity as EntityDefinition, {
      first_name: 'Ada', last_name: 'Lovelace', email: 'Ada@Example.com', phone: '', company_id: CO, company_name: 'Acme', source_id: null, tags: ['vip'],
    });
    expect(names.sort()).toEqual(['t#vip', `c#${CO}`, 'e#ada@example.com'].sort());
    const search = searchNamesOf(contactEntity as EntityDefinition, { first_name: 'Ada', last_name: 'Lovelace', email: 'Ada@Example.com', company_name: 'Acme', phone: '' });
    // Every prefix length from 3 up to the word (then 16, 20, …): 'lovelace' gives 3..8.
    expect(search).toEqual(expect.arrayContaining(['w#ada', 'w#lov', 'w#love', 'w#lovel', 'w#lovela', 'w#lovelac', 'w#lovelace', 'w#acm', 'w#acme', 'w#example']));
    expect(search.some((n) => n.includes('@'))).toBe(false);
    expect(names.some((n) => n.startsWith('s#'))).toBe(false);
    expect(new Set(names).size).toBe(names.length);
  });

  it('companies: exact domain lookup; projects: status values and contact references; activities: type, completed, links', () => {
    expect(indexNamesOf(companyEntity as EntityDefinition, { name: 'Acme', domain: 'ACME.io', tags: [] })).toEqual(['d#acme.io']);
    expect(indexNamesOf(projectEntity as EntityDefinition, { name: 'Engine', status: 'open', company_id: CO, contact_ids: [K1], tags: [] })).toEqual(
      expect.arrayContaining(['v#status#open', `c#${CO}`, `k#${K1}`]),
    );
    const act = indexNamesOf(activityEntity as EntityDefinition, { type: 'task', completed: false, contact_ids: [K1], company_id: null, project_id: null });
    expect(act.sort()).toEqual(['v#completed#false', 'v#type#task', `k#${K1}`].sort());
  });
});

describe('requests of a write', () => {
  const model: EntityModel = {
    type: 'contact',
    indexNames: (r) => indexNamesOf(contactEntity as EntityDefinition, r),
    sortedEntries: (r, custom) => sortedEntriesOf(contactEntity as EntityDefinition, r, custom),
    indexedCustom: async () => ({}),
  };
  const SORTED = (field: string) => `A#${ACC}#contact#s#${field}`;

  it('a new record is one item keyed by account, type and id, with its GSI position and one entry per index name', () => {
    const { item, entries } = newRecordItems(model, { accountId: ACC, userId: K1, fields: { first_name: 'Ada', tags: ['vip'] } }, NOW, K1);
    expect(item).toMatchObject({ pk: `A#${ACC}#contact#${K1}`, sk: 'R', gsi1pk: `A#${ACC}#contact`, gsi1sk: `${NOW}#${K1}`, entity: 'contact', ver: 1 });
    const tagEntries = entries.filter((e) => e.pk.includes('#x#'));
    expect(tagEntries.map((e) => e.pk).sort()).toEqual([`A#${ACC}#contact#x#t#vip`]);
    expect(tagEntries.every((e) => e.sk === `${NOW}#${K1}` && e.id === K1)).toBe(true);
    // One sort-ordered entry per sorted field: the value's ordered encoding, empty values in their own section.
    const sorted = Object.fromEntries(entries.filter((e) => e.pk.includes('#s#')).map((e) => [e.pk, e.sk]));
    expect(sorted).toEqual({
      [SORTED('first_name')]: `vada\u0001${NOW}#${K1}`,
      [SORTED('last_name')]: `z\u0001${NOW}#${K1}`,
      [SORTED('email')]: `z\u0001${NOW}#${K1}`,
      [SORTED('owner_id')]: `z\u0001${NOW}#${K1}`,
      [SORTED('updated_at')]: `v${instantKey(NOW)}\u0001${NOW}#${K1}`,
    });
    expect(entries.filter((e) => e.pk.includes('#s#')).every((e) => e.id === K1 && (e as { pos?: string }).pos === `${NOW}#${K1}`)).toBe(true);
  });

  it('an update writes only what changed, guarded by the version, and moves only changed index entries', () => {
    const { item } = newRecordItems(model, { accountId: ACC, userId: K1, fields: { first_name: 'Ada', city: 'Paris', tags: ['vip'], custom_fields: { a: 1 } } }, NOW, K1);
    const current = item as unknown as StoredRecord;
    const plan = planUpdate(model, ACC, current, { set: { tags: ['gold'] }, customSet: { b: 2 }, customRemove: ['a'] }, '2026-11-23T00:00:00.000Z');
    expect(plan.update.Key).toEqual({ pk: `A#${ACC}#contact#${K1}`, sk: 'R' });
    expect(plan.update.ConditionExpression).toBe('#ver = :ver');
    expect(plan.update.ExpressionAttributeValues).toMatchObject({ ':ver': 1, ':ver2': 2, ':tags': ['gold'], ':custom_fields_b': 2 });
    expect(plan.update.UpdateExpression).toBe('SET #ver = :ver2, #updated_at = :updated_at, #tags = :tags, #custom_fields.#b = :custom_fields_b, #idx = :idx REMOVE #custom_fields.#a');
    expect(plan.update.ExpressionAttributeNames).toMatchObject({ '#tags': 'tags', '#b': 'b', '#a': 'a', '#custom_fields': 'custom_fields' });
    // The tag's entry moves (a delete and a put); no sorted field changed, so no sort-ordered entry moves in the transaction.
    expect(plan.added.map((t) => t.Put?.Item?.pk)).toEqual([`A#${ACC}#contact#x#t#gold`]);
    expect(plan.removed.map((t) => t.Delete?.Key?.pk)).toEqual([`A#${ACC}#contact#x#t#vip`]);
    // The write stamp's entry moves beside it: the new one put before, the old one deleted after.
    expect(plan.beside.put.map(({ item }) => [item.pk, item.sk])).toEqual([[SORTED('updated_at'), `v${instantKey('2026-11-23T00:00:00.000Z')}\u0001${NOW}#${K1}`]]);
    expect(plan.beside.remove).toEqual([{ pk: SORTED('updated_at'), sk: `v${instantKey(NOW)}\u0001${NOW}#${K1}` }]);
    // Each new entry carries the version it is written for: a put never replaces a later one's.
    expect(plan.beside.put.map(({ item }) => item.ver)).toEqual([2]);
    expect(plan.next).toMatchObject({ ver: 2, city: 'Paris', custom_fields: { b: 2 } });
  });

  it('an update of a sorted field moves its entry only; an indexed custom field keeps its own', () => {
    const indexed = { cf1: 'number' as const };
    const { item, entries } = newRecordItems(model, { accountId: ACC, userId: K1, fields: { first_name: 'Ada', custom_fields: { cf1: -2.5 } } }, NOW, K1, indexed);
    expect(entries.find((e) => e.pk === SORTED('custom_fields.cf1'))?.sk).toBe(`v${sortKeyOf('number', -2.5)}\u0001${NOW}#${K1}`);
    const plan = planUpdate(model, ACC, item as unknown as StoredRecord, { set: { first_name: 'Élodie' }, customSet: { cf1: 3 } }, NOW, undefined, indexed);
    // Beside the write (no transaction): the new entries put before it, the old ones deleted after.
    expect(plan.added).toEqual([]);
    expect(plan.removed).toEqual([]);
    expect(plan.beside.put.map(({ item }) => [item.pk, item.sk])).toEqual([
      [SORTED('first_name'), `velodie\u0001${NOW}#${K1}`],
      [SORTED('custom_fields.cf1'), `v${sortKeyOf('number', 3)}\u0001${NOW}#${K1}`],
    ]);
    expect(plan.beside.remove.map((k) => k.sk)).toEqual([`vada\u0001${NOW}#${K1}`, `v${sortKeyOf('number', -2.5)}\u0001${NOW}#${K1}`]);
  });

  it('an update of a field no index holds touches no index entry', () => {
    const { item } = newRecordItems(model, { accountId: ACC, userId: K1, fields: { first_name: 'Ada', notes: '' } }, NOW, K1);
    const plan = planUpdate(model, ACC, item as unknown as StoredRecord, { set: { notes: 'hello' } }, NOW);
    expect(plan.added).toEqual([]);
    expect(plan.removed).toEqual([]);
    // Written at the same instant: the stamp's entry stays where it is.
    expect(plan.beside).toEqual({ put: [], remove: [] });
    expect(plan.update.UpdateExpression).toBe('SET #ver = :ver2, #updated_at = :updated_at, #notes = :notes');
  });
});
