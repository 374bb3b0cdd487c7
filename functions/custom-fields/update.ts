import { updateDefinition } from '../../shared/domain/custom-fields.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith, rejectUnknownFields, requireName, requireId } from '../../shared/schemas/common.js';
import { customFieldUpdateInput } from '../../shared/schemas/custom-fields.js';

export const handler = operation({
  name: 'custom-fields-update',
  family: 'custom_fields',
  parse: (body) => {
    rejectUnknownFields('custom_fields', body, {
      allowed: Object.keys(customFieldUpdateInput.entries),
      readOnly: ['account_id', 'created_by', 'created_at', 'updated_at', 'entity_type', 'field_type'],
    });
    const id = requireId('custom_fields', body);
    requireName('custom_fields.name_required', 'name', body, 'update');
    return { ...parseWith('custom_fields', customFieldUpdateInput, body), id };
  },
  run: (input, ctx) => updateDefinition(ctx, input),
});
