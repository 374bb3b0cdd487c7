/** Custom field definitions (contract §5): the family's operations, declared once (see ../resource.ts). */
import * as v from 'valibot';
import { idOnlyInput } from '../common.js';
import { customFieldCreateInput, customFieldListInput, customFieldSchema, customFieldUpdateInput } from '../custom-fields.js';
import { BY_ID, defineResource } from '../resource.js';
import { deletedSchema } from './shared.js';
import { CUSTOM_FIELD_KEYS } from '../keys/custom-fields.js';

export const customFieldList = v.object({ items: v.array(customFieldSchema) });
const READ_ONLY = ['account_id', 'created_by', 'created_at', 'updated_at', 'index_status'] as const;

export const customFieldsResource = defineResource({
  family: 'custom_fields',
  prefix: 'custom-fields',
  keys: CUSTOM_FIELD_KEYS,
  components: {
    CustomField: customFieldSchema,
    CustomFieldList: customFieldList,
    CustomFieldListInput: customFieldListInput,
    CustomFieldCreateInput: customFieldCreateInput,
    CustomFieldUpdateInput: customFieldUpdateInput,
  },
  operations: {
    list: { access: 'read', summary: 'List custom field definitions', input: customFieldListInput, result: customFieldList },
    get: { access: 'read', summary: 'Get a custom field definition', input: idOnlyInput, result: customFieldSchema, body: BY_ID },
    create: {
      access: 'write',
      idempotent: true,
      summary: 'Define a custom field for contacts, companies or projects',
      input: customFieldCreateInput,
      result: customFieldSchema,
      description: 'With `indexed: true` the field keeps sort-ordered index entries (contract §17); its `index_status` is `building` until every existing record has its entry.',
      errors: ['custom_fields.limit_exceeded'],
      bindings: { indexBuildsQueue: 'send' },
      body: { readOnly: ['id', ...READ_ONLY], required: [{ field: 'name', code: 'custom_fields.name_required', mode: 'create' }] },
    },
    update: {
      access: 'write',
      summary: 'Update a custom field definition (name, description, options, indexed)',
      description: 'Turning `indexed` on or off applies to the existing records in the background: `index_status` is `building` meanwhile (filters stay correct; a sort on the field is 409 `<family>.index_building`), then `ready`.',
      input: customFieldUpdateInput,
      result: customFieldSchema,
      errors: ['custom_fields.limit_exceeded'],
      bindings: { indexBuildsQueue: 'send' },
      body: { readOnly: [...READ_ONLY, 'entity_type', 'field_type'], ids: ['id'], required: [{ field: 'name', code: 'custom_fields.name_required', mode: 'update' }] },
    },
    delete: { access: 'write', summary: 'Delete a custom field definition and its values on every record', input: idOnlyInput, result: deletedSchema, body: BY_ID, bindings: { indexBuildsQueue: 'send' } },
  },
});
