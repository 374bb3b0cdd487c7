import * as v from 'valibot';
import { plainString } from './primitives.js';
import { CUSTOM_FIELD_TYPES } from './entities/type-lists.js';

const CUSTOM_ENTITY_TYPES = CUSTOM_FIELD_TYPES;
export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'url', 'email', 'select', 'multi_select'] as const;

const d = <S extends v.GenericSchema>(schema: S, description: string, example?: unknown) =>
  v.pipe(schema, v.metadata({ description, ...(example !== undefined ? { examples: [example] } : {}) }));
const doc = {
  entityType: `The records the field belongs to: ${CUSTOM_ENTITY_TYPES.join(', ')}`,
  name: 'Display name (1–200 characters); record values are keyed by the definition id, not by this name',
  fieldType: 'The type of the values: text, number, boolean, date (YYYY-MM-DD), datetime, url, email, select, multi_select',
  options: 'The allowed values of select and multi_select fields (1–100 distinct strings); not allowed for other types',
  description: 'Free text, at most 500 characters',
  indexed: 'Keeps sort-ordered index entries (contract §17): sort and eq/in/prefix/range conditions on the field read full pages at flat cost (default false; at most 10 indexed per entity type). Turning it on or off applies to the existing records in the background (index_status building)',
};

// --- custom field definitions -----------------------------------------------------------------
// The input schemas are built in calls marked `@__PURE__`: a record function, which reads only
// `customFieldSchema`, drops them (primitives.ts).

const optionList = /* @__PURE__ */ (() => v.pipe(
  v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'options must not be blank'), v.maxLength(200, 'options must be at most 200 characters'))),
  v.metadata({ description: doc.options, examples: [['Gold', 'Silver']] }),
  v.minLength(1, 'at least 1 option'),
  v.maxLength(100, 'at most 100 options'),
))();

export const customFieldCreateInput = /* @__PURE__ */ (() => v.strictObject({
  entity_type: d(v.picklist(CUSTOM_ENTITY_TYPES, `must be one of ${CUSTOM_ENTITY_TYPES.join(', ')}`), doc.entityType, 'contact'),
  name: v.pipe(v.string(), v.metadata({ description: doc.name, examples: ['Tier'] }), v.trim(), v.minLength(1, 'must not be blank'), v.maxLength(200, 'must be at most 200 characters')),
  field_type: d(v.picklist(FIELD_TYPES, 'is not a known field type'), doc.fieldType, 'select'),
  options: v.optional(optionList),
  description: v.optional(d(plainString, doc.description, 'Customer tier')),
  indexed: v.optional(d(v.boolean('must be true or false'), doc.indexed, false)),
}))();

export const customFieldUpdateInput = /* @__PURE__ */ (() => v.strictObject({
  id: d(v.pipe(v.string(), v.uuid('must be a UUID')), 'Id of the definition to update', '7c9e6679-7425-40de-944b-e07fc1f90ae7'),
  name: v.optional(customFieldCreateInput.entries.name),
  description: v.optional(d(plainString, doc.description, 'Customer tier')),
  options: customFieldCreateInput.entries.options,
  indexed: customFieldCreateInput.entries.indexed,
}))();

export const customFieldListInput = /* @__PURE__ */ (() => v.strictObject({
  entity_type: v.optional(d(v.picklist(CUSTOM_ENTITY_TYPES, `must be one of ${CUSTOM_ENTITY_TYPES.join(', ')}`), 'Only the definitions of this entity type', 'contact')),
}))();

const uuidOut = (description: string) => d(v.pipe(v.string(), v.uuid()), description, '7c9e6679-7425-40de-944b-e07fc1f90ae7');
const timestampOut = (description: string) => d(v.pipe(v.string(), v.isoTimestamp()), description, '2026-11-22T01:16:30.123Z');

export const customFieldSchema = v.object({
  id: uuidOut('Unique identifier: the key of this field in records\' custom_fields'),
  account_id: uuidOut('Account the definition belongs to'),
  created_by: uuidOut('User who created it'),
  entity_type: d(v.picklist(CUSTOM_ENTITY_TYPES), doc.entityType, 'contact'),
  name: d(v.string(), doc.name, 'Tier'),
  field_type: d(v.picklist(FIELD_TYPES), doc.fieldType, 'select'),
  options: d(v.array(v.string()), 'The allowed values of select and multi_select fields ([] for other types)', ['Gold', 'Silver']),
  description: d(v.string(), doc.description, 'Customer tier'),
  indexed: d(v.boolean(), doc.indexed, false),
  index_status: d(v.picklist(['ready', 'building']), 'building while a change of indexed is applied to the existing records (filters stay correct meanwhile; a sort on the field is 409 <family>.index_building), else ready', 'ready'),
  created_at: timestampOut('Creation timestamp (ISO 8601 UTC)'),
  updated_at: timestampOut('Last update timestamp (ISO 8601 UTC)'),
});
