import { createDefinition } from '../../shared/domain/custom-fields.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith, rejectUnknownFields, requireName } from '../../shared/schemas/common.js';
import { customFieldCreateInput } from '../../shared/schemas/custom-fields.js';

export const handler = operation({
  name: 'custom-fields-create',
  family: 'custom_fields',
  wrap: idempotentCreate(),
  parse: (body) => {
    rejectUnknownFields('custom_fields', body, { allowed: Object.keys(customFieldCreateInput.entries), readOnly: ['id', 'account_id', 'created_by', 'created_at', 'updated_at'] });
    requireName('custom_fields.name_required', 'name', body, 'create');
    return parseWith('custom_fields', customFieldCreateInput, body);
  },
  run: (input, ctx) => createDefinition(ctx, input),
});
