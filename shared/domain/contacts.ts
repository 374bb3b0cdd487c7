import { type AccountMeta, currentRef, readMeta, readRecordWithMeta, type RefKind } from '../db/meta.js';
import {
  createRecord,
  deleteRecord,
  type EntityModel,
  getRecord,
  type StoredRecord,
  updateRecord,
} from '../db/records.js';
import { ApiError, notFound } from '../errors.js';
import type { OperationContext } from './context.js';
import { isUuid } from '../schemas/common.js';
import { CONTACT_FIELDS, type ContactListInput, contactWritable } from '../schemas/records.js';
import type { parseRecordBody } from '../schemas/record-body.js';
import { matchesQuery, normalize, parseQuery, recordWords } from '../search/tokenize.js';
import { checkCustomFields } from './custom-fields.js';
import { canonicalSearch, emailIndexName, page, searchDrivers, searchIndexNames, tagNames } from './listing.js';
import { defaultFields, shape, visibleCustomFields } from './shape.js';

export const contactBody = {
  family: 'contacts' as const,
  writable: contactWritable,
  computed: ['company_name', 'source_name'],
  nameField: 'first_name' as const,
  nameCode: 'contacts.first_name_required',
};

const DEFAULTS: Record<string, unknown> = { company_id: null, source_id: null, tags: [], custom_fields: {} };

export function contactWords(r: Record<string, unknown>, companyName = r.company_name): Set<string> {
  return recordWords({
    text: [String(r.first_name ?? ''), String(r.last_name ?? ''), String(companyName ?? '')],
    emails: [String(r.email ?? '')],
    phones: [String(r.phone ?? '')],
  });
}

export const contactModel: EntityModel = {
  type: 'contact',
  indexNames: (r) => [
    ...tagNames(r.tags),
    ...(typeof r.company_id === 'string' ? [`c#${r.company_id}`] : []),
    ...(typeof r.source_id === 'string' ? [`s#${r.source_id}`] : []),
    ...(typeof r.email === 'string' && r.email.trim() !== '' ? [emailIndexName(normalize(r.email.trim()))] : []),
    ...searchIndexNames(contactWords(r)),
  ],
};

export type Contact = Record<(typeof CONTACT_FIELDS)[number], unknown>;

/** The API view: computed names are the referenced record's current name (meta overrides apply). */
export function contactToApi(item: Record<string, unknown>, meta?: AccountMeta): Contact {
  const out = shape(CONTACT_FIELDS, DEFAULTS, item);
  if (meta) {
    const company = currentRef(meta, 'company', item.company_id, item.company_name);
    const source = currentRef(meta, 'source', item.source_id, item.source_name);
    out.company_id = company.id;
    out.company_name = company.name;
    out.source_id = source.id;
    out.source_name = source.name;
  }
  out.custom_fields = visibleCustomFields(item.custom_fields, meta);
  return out;
}

const REF = {
  company: { type: 'company', field: 'company_id', code: 'contacts.invalid_company_id', what: 'company' },
  source: { type: 'source', field: 'source_id', code: 'contacts.invalid_source_id', what: 'lead source' },
} as const;

interface ResolvedRef {
  id: string | null;
  name: string;
  ver?: number;
}

/** Resolves company_id / source_id to the referenced record's current name and version. */
async function resolveRef(kind: RefKind, accountId: string, id: string | null | undefined): Promise<ResolvedRef> {
  if (id === null || id === undefined) return { id: null, name: '' };
  const ref = REF[kind];
  const invalid = () => new ApiError(ref.code, `${ref.field} does not reference an existing ${ref.what}`, [{ path: ref.field, message: `no such ${ref.what}` }]);
  if (!isUuid(id)) throw invalid();
  const record = await getRecord(ref.type, accountId, id.toLowerCase());
  if (!record) throw invalid();
  return { id: record.id, name: String(record.name), ver: record.ver };
}

/**
 * After a write that linked a company/source read at version `ver`: if it was renamed or deleted
 * meanwhile, its fan-out may have run before this contact was visible, so bring the contact's
 * stored name (or link) up to date here. Cheaper than a condition check in the write (one read
 * instead of two write units per reference), and race-free: whichever of the two runs last sees
 * both writes.
 */
async function reconcileRefs(accountId: string, record: StoredRecord, refs: Array<[RefKind, ResolvedRef]>): Promise<StoredRecord> {
  let current = record;
  for (const [kind, linked] of refs) {
    if (!linked.id) continue;
    const now = await getRecord(REF[kind].type, accountId, linked.id);
    if (now && now.ver === linked.ver) continue;
    const field = REF[kind].field;
    const nameField = kind === 'company' ? 'company_name' : 'source_name';
    current =
      (await updateRecord(contactModel, {
        accountId,
        id: record.id,
        compute: (c) => (c[field] !== linked.id ? undefined : { set: now ? { [nameField]: now.name } : { [field]: null, [nameField]: '' } }),
      })) ?? current;
  }
  return current;
}

type Body = ReturnType<typeof parseRecordBody<typeof contactWritable>>;

export async function createContact(ctx: OperationContext, { fields }: Body): Promise<Contact> {
  const { custom_fields: cfInput, company_id, source_id, ...rest } = fields;
  const cf = await checkCustomFields('contacts', ctx.accountId, 'contact', cfInput ?? {});
  const stored = defaultFields(CONTACT_FIELDS, DEFAULTS);
  const [company, source] = await Promise.all([resolveRef('company', ctx.accountId, company_id), resolveRef('source', ctx.accountId, source_id)]);
  const record = await createRecord(contactModel, {
    accountId: ctx.accountId,
    userId: ctx.userId,
    fields: { ...stored, ...rest, company_id: company.id, company_name: company.name, source_id: source.id, source_name: source.name, custom_fields: cf.set },
  });
  return contactToApi(await reconcileRefs(ctx.accountId, record, [['company', company], ['source', source]]));
}

export async function getContact(ctx: OperationContext, id: string): Promise<Contact> {
  const { record, meta } = await readRecordWithMeta('contact', ctx.accountId, id);
  if (!record) throw notFound('contacts', 'contact');
  return contactToApi(record, meta);
}

export async function updateContact(ctx: OperationContext, { id, fields }: Body): Promise<Contact> {
  const { custom_fields: cfInput, company_id, source_id, ...set } = fields;
  const cf = cfInput ? await checkCustomFields('contacts', ctx.accountId, 'contact', cfInput) : undefined;
  const linked: Array<[RefKind, ResolvedRef]> = [];
  const updated = await updateRecord(contactModel, {
    accountId: ctx.accountId,
    id: id!,
    compute: async (current) => {
      linked.length = 0;
      const refs: Record<string, unknown> = {};
      for (const [kind, value] of [['company', company_id], ['source', source_id]] as const) {
        if (value === undefined) continue;
        const field = REF[kind].field;
        const nameField = kind === 'company' ? 'company_name' : 'source_name';
        const resolved = await resolveRef(kind, ctx.accountId, value);
        if (resolved.id === current[field] && resolved.name === current[nameField]) continue;
        refs[field] = resolved.id;
        refs[nameField] = resolved.name;
        linked.push([kind, resolved]);
      }
      return { set: { ...set, ...refs }, customSet: cf?.set, customRemove: cf?.remove };
    },
  });
  const record = updated && (await reconcileRefs(ctx.accountId, updated, linked));
  if (!record) throw notFound('contacts', 'contact');
  return contactToApi(record, await readMeta(ctx.accountId));
}

export async function deleteContact(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  const old = await deleteRecord(contactModel, ctx.accountId, id);
  if (!old) throw notFound('contacts', 'contact');
  return { deleted: true };
}

export async function listContacts(ctx: OperationContext, input: ContactListInput) {
  const query = parseQuery(input.search, { exactEmail: true });
  const tags = [...new Set(input.tags ?? [])];
  const companies = [...new Set([...(input.company_id ? [input.company_id] : []), ...(input.company_ids ?? [])])];
  const sources = [...new Set(input.source_ids ?? [])];
  const filters = { search: canonicalSearch(input.search), tags: [...tags].sort(), companies: [...companies].sort(), sources: [...sources].sort() };
  if (query && query.words.length === 0 && !query.phoneDigits && query.email === undefined) return { items: [], next_cursor: '' };
  let meta!: AccountMeta;
  const ready = readMeta(ctx.accountId).then((m) => (meta = m));

  const drivers = [
    ...(query ? searchDrivers(query) : []),
    ...tags.map((t) => tagNames([t])),
    companies.map((c) => `c#${c}`),
    sources.map((s) => `s#${s}`),
  ];

  const filtered = Boolean(query || tags.length || companies.length || sources.length);
  const matches = (r: StoredRecord) => {
    const rTags = (r.tags ?? []) as string[];
    if (!tags.every((t) => rTags.includes(t))) return false;
    const company = currentRef(meta, 'company', r.company_id, r.company_name);
    if (companies.length && !(company.id && companies.includes(company.id))) return false;
    const source = currentRef(meta, 'source', r.source_id, r.source_name);
    if (sources.length && !(source.id && sources.includes(source.id))) return false;
    return !query || matchesQuery(contactWords(r, company.name), query, String(r.email ?? ''));
  };
  return page(
    ctx,
    {
      type: 'contact',
      family: 'contacts',
      cursor: input.cursor,
      limit: input.limit,
      filters,
      drivers,
      matches: filtered ? matches : undefined,
      ready,
    },
    (r) => contactToApi(r, meta),
  );
}
