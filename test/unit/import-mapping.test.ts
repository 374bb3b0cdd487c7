import { describe, expect, it } from 'vitest';
import type { CustomFieldDefinition } from '../../shared/domain/custom-fields.js';
import { escapeFormula, exportColumns, mapHeaders, mapRow, normalizeHeader, recordCells, unescapeFormula } from '../../shared/imports/mapping.js';
import { rowRecordId } from '../../shared/imports/worker.js';
import { companyEntity, contactEntity, type EntityDefinition } from '../../shared/schemas/entities/index.js';

const contact = contactEntity as unknown as EntityDefinition;
const company = companyEntity as unknown as EntityDefinition;
const def = (name: string, field_type: CustomFieldDefinition['field_type'], options: string[] = []): CustomFieldDefinition => ({
  id: `id-${name.toLowerCase()}`,
  account_id: 'a',
  created_by: 'u',
  entity_type: 'contact',
  name,
  field_type,
  options,
  description: '',
  indexed: false,
  index_status: 'ready',
  created_at: '',
  updated_at: '',
});

describe('import header mapping', () => {
  it('compares headers without case, spaces, - and _', () => {
    expect(['First Name', 'first-name', 'FIRST_NAME', ' firstName '].map(normalizeHeader)).toEqual(['firstname', 'firstname', 'firstname', 'firstname']);
    const m = mapHeaders(contact, ['First Name', 'E-Mail', 'Email', 'company domain', 'Custom: tier', 'custom:Unknown', 'Company Name', 'custom_fields', 'Zip Code'], [def('Tier', 'text')]);
    expect(m.columns.map((c) => [c.header, c.target.kind === 'field' ? c.target.field : c.target.kind])).toEqual([
      ['First Name', 'first_name'],
      ['E-Mail', 'email'],
      ['company domain', 'company_domain'],
      ['Custom: tier', 'custom'],
      ['Zip Code', 'zip_code'],
    ]);
    // E-Mail is email; the later Email column fills it again and is ignored; read-only and unknown headers too.
    expect(m.unmapped).toEqual(['Email', 'custom:Unknown', 'Company Name', 'custom_fields']);
    expect(m.keyColumn?.header).toBe('E-Mail');
    expect(mapHeaders(company, ['Name', 'Domain', 'company_domain'], []).unmapped).toEqual(['company_domain']);
    expect(mapHeaders(contact, ['first_name', 'First Name'], []).unmapped).toEqual(['First Name']);
  });

  it('converts cells: tags on ;, counts, custom values by type; empty cells are left out', () => {
    const defs = [def('Score', 'number'), def('Vip', 'boolean'), def('Langs', 'multi_select', ['en', 'fr', 'de']), def('Tier', 'select', ['gold'])];
    const m = mapHeaders(contact, ['first_name', 'last_name', 'tags', 'custom:score', 'custom:vip', 'custom:langs', 'custom:tier'], defs);
    expect(mapRow(contact, m, ['Ada', '', ' a ; b;;a ', '4.5', 'Yes', 'en; de', 'gold'])).toMatchObject({
      body: { first_name: 'Ada', tags: ['a', 'b', 'a'], custom_fields: { 'id-score': 4.5, 'id-vip': true, 'id-langs': ['en', 'de'], 'id-tier': 'gold' } },
    });
    expect(mapRow(contact, m, ['Ada', '', '', 'many', '', '', ''])).toMatchObject({ code: 'invalid_custom_fields', column: 'custom:score', value: 'many' });
    expect(mapRow(contact, m, ['Ada', '', '', '', '', '', 'silver'])).toMatchObject({ code: 'invalid_custom_fields', column: 'custom:tier' });
    const c = mapHeaders(company, ['name', 'employee_count', 'annual_revenue', 'phone'], []);
    expect(mapRow(company, c, ['Acme', '120', 'lots', '0123'])).toMatchObject({ body: { name: 'Acme', employee_count: 120, annual_revenue: 'lots', phone: '0123' } });
  });

  it('derives one lowercase UUID per (import, row)', () => {
    const a = rowRecordId('imp-1', 2);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rowRecordId('imp-1', 2)).toBe(a);
    expect(new Set([a, rowRecordId('imp-1', 3), rowRecordId('imp-2', 2)]).size).toBe(3);
  });

  it('formula injection: hostile cells get one leading quote on export, and the import strips exactly that one', () => {
    const hostile = ['=1+1', '+1 555', '-5', '@SUM(A1)', '\tx', '\rx', "'=x", "''@x", "'plain", "it's", '', 'plain', 'a=b', ' =x'];
    expect(hostile.map(escapeFormula)).toEqual(["'=1+1", "'+1 555", "'-5", "'@SUM(A1)", "'\tx", "'\rx", "''=x", "'''@x", "'plain", "it's", '', 'plain', 'a=b', ' =x']);
    for (const cell of hostile) expect(unescapeFormula(escapeFormula(cell))).toBe(cell);
    // Only one quote before a formula character is stripped; a quote before anything else stays.
    expect(unescapeFormula("'=x")).toBe('=x');
    expect(unescapeFormula("''=x")).toBe("'=x");
    expect(unescapeFormula("'x")).toBe("'x");
    // Through the import's row mapping (cells are trimmed first, then unescaped).
    const m = mapHeaders(contact, ['first_name', 'last_name', 'phone', 'tags', 'custom:score'], [def('Score', 'number')]);
    expect(mapRow(contact, m, ["'=cmd()", "''=kept", " '+1 555 ", "'-a;@b", "'-2.5"])).toMatchObject({
      body: { first_name: '=cmd()', last_name: "'=kept", phone: '+1 555', tags: ['-a', '@b'], custom_fields: { 'id-score': -2.5 } },
    });
  });

  it('export columns are the import headers: each maps back to its field; id, created_at, updated_at and owner_name are ignored silently', () => {
    const defs = [def('Tier', 'select', ['gold']), def('Score', 'number')];
    const cols = exportColumns(contact, defs);
    const headers = cols.map((c) => c.header);
    // Definitions come newest first (custom-fields-list): the columns list them oldest first.
    expect(headers).toEqual([
      'first_name', 'last_name', 'email', 'phone', 'company_id', 'job_title', 'address', 'city', 'state', 'zip_code', 'country', 'notes', 'owner_id', 'tags', 'source_id',
      'company_domain', 'owner_name', 'custom:Score', 'custom:Tier', 'id', 'created_at', 'updated_at',
    ]);
    const m = mapHeaders(contact, headers, defs);
    expect(m.unmapped).toEqual([]);
    expect(m.columns).toHaveLength(headers.length - 4);
    expect(m.keyColumn?.header).toBe('email');
    expect(mapHeaders(company, exportColumns(company, []).map((c) => c.header), []).unmapped).toEqual([]);
    expect(exportColumns(company, []).map((c) => c.header)).not.toContain('company_domain');

    const record = { first_name: '=Ada', last_name: null, tags: ['-x', 'y'], custom_fields: { 'id-score': -1, 'id-tier': 'gold' }, id: 'i', created_at: 'c', updated_at: 'u', employee_count: 3 };
    const cells = recordCells(cols, record, 'custom_fields', 'acme.example');
    const row = Object.fromEntries(headers.map((h, i) => [h, cells[i]]));
    expect(row).toMatchObject({ first_name: "'=Ada", last_name: '', tags: "'-x;y", company_domain: 'acme.example', 'custom:Score': "'-1", 'custom:Tier': 'gold', id: 'i', created_at: 'c', updated_at: 'u' });
    // And back: the row maps to the record's values.
    expect(mapRow(contact, m, cells)).toMatchObject({ body: { first_name: '=Ada', tags: ['-x', 'y'], custom_fields: { 'id-score': -1, 'id-tier': 'gold' } }, companyDomain: 'acme.example' });
  });

  it('maps an owner_email column (any spelling) to the member reference it names, for the worker to look up', () => {
    const m = mapHeaders(contact, ['First Name', 'Owner-Email', 'owner_name'], []);
    expect(m.unmapped).toEqual([]);
    expect(m.columns.map((c) => c.target)).toEqual([{ kind: 'field', field: 'first_name' }, { kind: 'member_email', field: 'owner_id' }]);
    const row = mapRow(contact, m, ['Ada', ' Grace@Example.com ', 'Grace']);
    expect(row).toMatchObject({ body: { first_name: 'Ada' }, memberEmails: new Map([['owner_id', { email: 'Grace@Example.com', header: 'Owner-Email' }]]) });
    expect((row as { body: object }).body).not.toHaveProperty('owner_name');
    expect(mapRow(contact, m, ['Ada', '', ''])).not.toHaveProperty('memberEmails');
  });
});
