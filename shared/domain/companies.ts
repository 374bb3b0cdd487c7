import { type AccountMeta, readMeta, readRecordWithMeta, setOverrideItem } from '../db/meta.js';
import { createRecord, deleteRecord, type EntityModel, type StoredRecord, updateRecord } from '../db/records.js';
import { notFound } from '../errors.js';
import type { OperationContext } from './context.js';
import { type CompanyListInput, COMPANY_FIELDS, companyWritable } from '../schemas/records.js';
import { parseRecordBody } from '../schemas/record-body.js';
import { matchesQuery, parseQuery, recordWords } from '../search/tokenize.js';
import { checkCustomFields } from './custom-fields.js';
import { canonicalSearch, page, searchDrivers, searchIndexNames, tagNames } from './listing.js';
import { defaultFields, shape, visibleCustomFields } from './shape.js';

export const companyBody = {
  family: 'companies' as const,
  writable: companyWritable,
  nameField: 'name' as const,
  nameCode: 'companies.name_required',
};

const DEFAULTS: Record<string, unknown> = { employee_count: null, annual_revenue: null, tags: [], custom_fields: {} };

const companyWords = (r: Record<string, unknown>) => recordWords({ text: [String(r.name ?? '')], domains: [String(r.domain ?? '')] });

export const companyModel: EntityModel = {
  type: 'company',
  indexNames: (r) => [...tagNames(r.tags), ...searchIndexNames(companyWords(r))],
};

export type Company = Record<(typeof COMPANY_FIELDS)[number], unknown>;

export function companyToApi(item: Record<string, unknown>, meta?: AccountMeta): Company {
  return { ...shape(COMPANY_FIELDS, DEFAULTS, item), custom_fields: visibleCustomFields(item.custom_fields, meta) };
}

type Body = ReturnType<typeof parseRecordBody<typeof companyWritable>>;

export async function createCompany(ctx: OperationContext, { fields }: Body): Promise<Company> {
  const { custom_fields: cfInput, ...rest } = fields;
  const cf = await checkCustomFields('companies', ctx.accountId, 'company', cfInput ?? {});
  const stored = defaultFields(COMPANY_FIELDS, DEFAULTS);
  const record = await createRecord(companyModel, { accountId: ctx.accountId, userId: ctx.userId, fields: { ...stored, ...rest, custom_fields: cf.set } });
  return companyToApi(record);
}

export async function getCompany(ctx: OperationContext, id: string): Promise<Company> {
  const { record, meta } = await readRecordWithMeta('company', ctx.accountId, id);
  if (!record) throw notFound('companies', 'company');
  return companyToApi(record, meta);
}

export async function updateCompany(ctx: OperationContext, { id, fields }: Body): Promise<Company> {
  const { custom_fields: cfInput, ...set } = fields;
  const cf = cfInput ? await checkCustomFields('companies', ctx.accountId, 'company', cfInput) : undefined;
  const record = await updateRecord(companyModel, {
    accountId: ctx.accountId,
    id: id!,
    compute: () => ({ set, customSet: cf?.set, customRemove: cf?.remove }),
    // A rename is visible on every contact at once (meta override) while the stream worker
    // rewrites the contacts' stored names and search entries.
    extra: (current, next) => (next.name !== current.name ? [setOverrideItem(ctx.accountId, 'company', id!, String(next.name), next.ver)] : []),
  });
  if (!record) throw notFound('companies', 'company');
  return companyToApi(record, await readMeta(ctx.accountId));
}

export async function deleteCompany(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const old = await deleteRecord(companyModel, ctx.accountId, id, (current) => [setOverrideItem(ctx.accountId, 'company', id, null, current.ver + 1)]);
  if (!old) throw notFound('companies', 'company');
  return { deleted: true };
}

export async function listCompanies(ctx: OperationContext, input: CompanyListInput) {
  const query = parseQuery(input.search);
  const tags = [...new Set(input.tags ?? [])];
  const filters = { search: canonicalSearch(input.search), tags: [...tags].sort() };
  if (query && query.words.length === 0 && !query.phoneDigits) return { items: [], next_cursor: '' };
  const meta = readMeta(ctx.accountId);
  const drivers = [...(query ? searchDrivers(query) : []), ...tags.map((t) => tagNames([t]))];
  const matches = (r: StoredRecord) => {
    const rTags = (r.tags ?? []) as string[];
    if (!tags.every((t) => rTags.includes(t))) return false;
    return !query || matchesQuery(companyWords(r), query);
  };
  const result = await page(
    ctx,
    { type: 'company', family: 'companies', cursor: input.cursor, limit: input.limit, filters, drivers, matches: query || tags.length ? matches : undefined },
    (r) => r,
  );
  const m = await meta;
  return { items: result.items.map((r) => companyToApi(r, m)), next_cursor: result.next_cursor };
}
