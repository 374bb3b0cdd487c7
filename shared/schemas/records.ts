import * as v from 'valibot';
import {
  countInteger,
  cursorString,
  customFieldsInput,
  emailString,
  httpUrlString,
  limitInteger,
  nameString,
  notesString,
  plainString,
  refId,
  searchString,
  tagList,
} from './common.js';

/** Fields every record carries that a client never sets. */
export const RECORD_READ_ONLY = ['id', 'account_id', 'created_by', 'created_at', 'updated_at'] as const;

/** `{ k: v.string() }` for each key, typed per key (so the result types name every field). */
const stringFields = <const K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, v.string()])) as { [P in K]: v.StringSchema<undefined> };

// --- companies --------------------------------------------------------------------------------

export const companyWritable = {
  name: nameString,
  domain: plainString,
  industry: plainString,
  notes: notesString,
  phone: plainString,
  website: httpUrlString,
  social_url: httpUrlString,
  address: plainString,
  city: plainString,
  state: plainString,
  zip_code: plainString,
  country: plainString,
  employee_count: countInteger,
  annual_revenue: countInteger,
  tags: tagList,
  custom_fields: customFieldsInput,
};
export const companyInput = v.partial(v.object(companyWritable));
export type CompanyInput = v.InferOutput<typeof companyInput>;

export const COMPANY_FIELDS = [
  'id', 'account_id', 'created_by', 'name', 'domain', 'industry', 'notes', 'phone', 'website', 'social_url', 'address',
  'city', 'state', 'zip_code', 'country', 'employee_count', 'annual_revenue', 'tags', 'custom_fields', 'created_at', 'updated_at',
] as const;

export const companySchema = v.object({
  id: v.string(),
  account_id: v.string(),
  created_by: v.string(),
  ...stringFields(['name', 'domain', 'industry', 'notes', 'phone', 'website', 'social_url', 'address', 'city', 'state', 'zip_code', 'country']),
  employee_count: v.nullable(v.number()),
  annual_revenue: v.nullable(v.number()),
  tags: v.array(v.string()),
  custom_fields: v.record(v.string(), v.unknown()),
  created_at: v.string(),
  updated_at: v.string(),
});

// --- contacts ---------------------------------------------------------------------------------

export const contactWritable = {
  first_name: nameString,
  last_name: plainString,
  email: emailString,
  phone: plainString,
  company_id: refId,
  job_title: plainString,
  address: plainString,
  city: plainString,
  state: plainString,
  zip_code: plainString,
  country: plainString,
  notes: notesString,
  tags: tagList,
  source_id: refId,
  custom_fields: customFieldsInput,
};
export const contactInput = v.partial(v.object(contactWritable));
export type ContactInput = v.InferOutput<typeof contactInput>;

export const CONTACT_FIELDS = [
  'id', 'account_id', 'created_by', 'first_name', 'last_name', 'email', 'phone', 'company_id', 'company_name', 'job_title',
  'address', 'city', 'state', 'zip_code', 'country', 'notes', 'tags', 'source_id', 'source_name', 'custom_fields', 'created_at', 'updated_at',
] as const;

export const contactSchema = v.object({
  id: v.string(),
  account_id: v.string(),
  created_by: v.string(),
  ...stringFields(['first_name', 'last_name', 'email', 'phone', 'company_name', 'job_title', 'address', 'city', 'state', 'zip_code', 'country', 'notes', 'source_name']),
  company_id: v.nullable(v.string()),
  source_id: v.nullable(v.string()),
  tags: v.array(v.string()),
  custom_fields: v.record(v.string(), v.unknown()),
  created_at: v.string(),
  updated_at: v.string(),
});

// --- sources ----------------------------------------------------------------------------------

export const sourceWritable = { name: nameString };
export const sourceInput = v.partial(v.object(sourceWritable));
export const SOURCE_FIELDS = ['id', 'account_id', 'created_by', 'name', 'created_at', 'updated_at'] as const;
export const sourceSchema = v.object({
  id: v.string(),
  account_id: v.string(),
  created_by: v.string(),
  name: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

// --- lists ------------------------------------------------------------------------------------

const uuidString = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase());
const filterTags = v.pipe(
  v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'tags must not be blank'), v.maxLength(64, 'tags must be at most 64 characters'))),
  v.maxLength(10, 'at most 10 tags'),
);

export const pageInput = { cursor: cursorString, limit: limitInteger };

export const contactListInput = v.strictObject({
  search: v.optional(searchString),
  tags: v.optional(filterTags),
  company_id: v.optional(uuidString),
  company_ids: v.optional(v.pipe(v.array(uuidString), v.maxLength(50, 'at most 50 company ids'))),
  source_ids: v.optional(v.pipe(v.array(uuidString), v.maxLength(50, 'at most 50 source ids'))),
  cursor: v.optional(cursorString),
  limit: v.optional(limitInteger),
});
export type ContactListInput = v.InferOutput<typeof contactListInput>;

export const companyListInput = v.strictObject({
  search: v.optional(searchString),
  tags: v.optional(filterTags),
  cursor: v.optional(cursorString),
  limit: v.optional(limitInteger),
});
export type CompanyListInput = v.InferOutput<typeof companyListInput>;

export const sourceListInput = v.strictObject({
  cursor: v.optional(cursorString),
  limit: v.optional(limitInteger),
});

// --- custom field definitions -----------------------------------------------------------------

export const customFieldCreateInput = v.strictObject({
  entity_type: v.picklist(['contact', 'company'], 'must be contact or company'),
  name: nameString,
  field_type: v.picklist(['text', 'number', 'boolean', 'date', 'datetime', 'url', 'email', 'select', 'multi_select'], 'is not a known field type'),
  options: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'options must not be blank'), v.maxLength(200, 'options must be at most 200 characters'))),
      v.minLength(1, 'at least 1 option'),
      v.maxLength(100, 'at most 100 options'),
    ),
  ),
  description: v.optional(plainString),
});

export const customFieldUpdateInput = v.strictObject({
  id: v.string(),
  name: v.optional(nameString),
  description: v.optional(plainString),
  options: customFieldCreateInput.entries.options,
});

export const customFieldListInput = v.strictObject({
  entity_type: v.optional(v.picklist(['contact', 'company'], 'must be contact or company')),
});

export const customFieldSchema = v.object({
  id: v.string(),
  account_id: v.string(),
  created_by: v.string(),
  entity_type: v.picklist(['contact', 'company']),
  name: v.string(),
  field_type: v.string(),
  options: v.array(v.string()),
  description: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});
