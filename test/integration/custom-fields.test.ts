import { describe, expect, it } from 'vitest';
import { invoke, newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };

describe('custom fields', () => {
  it('validates values of all nine types against their definitions and merges updates by key', async () => {
    const auth = newAccount();
    const def = async (field_type: string, extra: Record<string, unknown> = {}) =>
      (await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: field_type, field_type, ...extra }, auth)).id;
    const ids = {
      text: await def('text'),
      number: await def('number'),
      boolean: await def('boolean'),
      date: await def('date'),
      datetime: await def('datetime'),
      url: await def('url'),
      email: await def('email'),
      select: await def('select', { options: ['a', 'b'] }),
      multi: await def('multi_select', { options: ['x', 'y', 'z'] }),
    };
    const values = {
      [ids.text]: 'hello', [ids.number]: 42.5, [ids.boolean]: true, [ids.date]: '2024-02-29', [ids.datetime]: '2026-11-22T01:16:30.123Z',
      [ids.url]: 'https://acme.com', [ids.email]: 'a@b.co', [ids.select]: 'b', [ids.multi]: ['x', 'z'],
    };
    const c = await ok<Rec>('contacts-create', { first_name: 'A', custom_fields: values }, auth);
    expect(c.custom_fields).toEqual(values);

    const bad = await invoke('contacts-update', { id: c.id, custom_fields: { [ids.number]: 'x', [ids.date]: '2023-02-29', [ids.select]: 'c' } }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe('contacts.invalid_custom_fields');
    expect(bad.body.error?.details?.map((d) => d.path).sort()).toEqual([`custom_fields.${ids.date}`, `custom_fields.${ids.number}`, `custom_fields.${ids.select}`].sort());

    const u = await ok<Rec>('contacts-update', { id: c.id, custom_fields: { [ids.text]: 'bye', [ids.number]: null } }, auth);
    const expected = { ...values, [ids.text]: 'bye' };
    delete expected[ids.number];
    expect(u.custom_fields).toEqual(expected);

    // a company definition is not valid on a contact
    const companyField = (await ok<Rec>('custom-fields-create', { entity_type: 'company', name: 'size', field_type: 'number' }, auth)).id;
    expect((await invoke('contacts-update', { id: c.id, custom_fields: { [companyField]: 1 } }, auth)).body.error?.code).toBe('contacts.invalid_custom_fields');
    expect((await ok<Rec>('companies-create', { name: 'Acme', custom_fields: { [companyField]: 10 } }, auth)).custom_fields).toEqual({ [companyField]: 10 });
    expect((await invoke('companies-create', { name: 'Acme', custom_fields: { [ids.text]: 'x' } }, auth)).body.error?.code).toBe('companies.invalid_custom_fields');
  });

  it('hides the values of a deleted definition at once', async () => {
    const auth = newAccount();
    const f1 = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'tier', field_type: 'text' }, auth);
    const f2 = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'score', field_type: 'number' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'A', custom_fields: { [f1.id]: 'gold', [f2.id]: 3 } }, auth);
    expect(await ok('custom-fields-delete', { id: f1.id }, auth)).toEqual({ deleted: true });
    expect((await ok<Rec>('contacts-get', { id: c.id }, auth)).custom_fields).toEqual({ [f2.id]: 3 });
    const list = await ok<{ items: Rec[] }>('contacts-list', {}, auth);
    expect(list.items[0]!.custom_fields).toEqual({ [f2.id]: 3 });
    expect((await invoke('custom-fields-get', { id: f1.id }, auth)).body.error?.code).toBe('custom_fields.not_found');
    expect((await invoke('contacts-update', { id: c.id, custom_fields: { [f1.id]: 'x' } }, auth)).body.error?.code).toBe('contacts.invalid_custom_fields');
  });

  it('manages definitions: options rules, list by entity type, update, errors, isolation', async () => {
    const auth = newAccount();
    const err = async (body: unknown, op = 'custom-fields-create') => (await invoke(op, body, auth)).body.error?.code;
    expect(await err({ entity_type: 'contact', field_type: 'text' })).toBe('custom_fields.name_required');
    expect(await err({ entity_type: 'deal', name: 'x', field_type: 'text' })).toBe('custom_fields.invalid_request');
    expect(await err({ entity_type: 'contact', name: 'x', field_type: 'color' })).toBe('custom_fields.invalid_request');
    expect(await err({ entity_type: 'contact', name: 'x', field_type: 'select' })).toBe('custom_fields.invalid_request');
    expect(await err({ entity_type: 'contact', name: 'x', field_type: 'select', options: ['a', 'a'] })).toBe('custom_fields.invalid_request');
    expect(await err({ entity_type: 'contact', name: 'x', field_type: 'text', options: ['a'] })).toBe('custom_fields.invalid_request');
    const s = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Stage', field_type: 'select', options: ['new', 'won'], description: 'pipeline' }, auth);
    expect(s).toMatchObject({ entity_type: 'contact', name: 'Stage', field_type: 'select', options: ['new', 'won'], description: 'pipeline' });
    const t = await ok<Rec>('custom-fields-create', { entity_type: 'company', name: 'Region', field_type: 'text' }, auth);
    expect(t.options).toEqual([]);
    expect((await ok<{ items: Rec[] }>('custom-fields-list', {}, auth)).items.map((d) => d.id)).toEqual([t.id, s.id]);
    expect((await ok<{ items: Rec[] }>('custom-fields-list', { entity_type: 'contact' }, auth)).items.map((d) => d.id)).toEqual([s.id]);
    const u = await ok<Rec>('custom-fields-update', { id: s.id, options: ['new', 'won', 'lost'], name: 'Deal stage' }, auth);
    expect(u).toMatchObject({ name: 'Deal stage', options: ['new', 'won', 'lost'] });
    expect(await err({ id: s.id, field_type: 'text' }, 'custom-fields-update')).toBe('custom_fields.invalid_request');
    expect(await err({ id: s.id, name: ' ' }, 'custom-fields-update')).toBe('custom_fields.name_required');
    expect(await err({ id: 'x' }, 'custom-fields-update')).toBe('custom_fields.invalid_id');
    const other = newAccount();
    expect((await invoke('custom-fields-get', { id: s.id }, other)).body.error?.code).toBe('custom_fields.not_found');
    expect((await ok<{ items: Rec[] }>('custom-fields-list', {}, other)).items).toEqual([]);
  });
});
