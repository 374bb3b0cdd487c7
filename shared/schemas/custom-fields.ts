import * as v from 'valibot';
import { nameString, plainString } from './common.js';
import { CUSTOM_FIELD_ENTITY_TYPES } from './entities/index.js';

const CUSTOM_ENTITY_TYPES = CUSTOM_FIELD_ENTITY_TYPES;
export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'url', 'email', 'select', 'multi_select'] as const;

// --- custom field definitions -----------------------------------------------------------------

export const customFieldCreateInput = v.strictObject({
  entity_type: v.picklist(CUSTOM_ENTITY_TYPES, `must be one of ${CUSTOM_ENTITY_TYPES.join(', ')}`),
  name: nameString,
  field_type: v.picklist(FIELD_TYPES, 'is not a known field type'),
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
  entity_type: v.optional(v.picklist(CUSTOM_ENTITY_TYPES, `must be one of ${CUSTOM_ENTITY_TYPES.join(', ')}`)),
});

export const customFieldSchema = v.object({
  id: v.string(),
  account_id: v.string(),
  created_by: v.string(),
  entity_type: v.picklist(CUSTOM_ENTITY_TYPES),
  name: v.string(),
  field_type: v.picklist(FIELD_TYPES),
  options: v.array(v.string()),
  description: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});
