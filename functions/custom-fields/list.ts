import { listDefinitions } from '../../shared/domain/custom-fields.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { customFieldListInput } from '../../shared/schemas/custom-fields.js';

export const handler = operation({
  name: 'custom-fields-list',
  family: 'custom_fields',
  parse: (body) => parseWith('custom_fields', customFieldListInput, body),
  run: async (input, ctx) => ({ items: await listDefinitions(ctx.accountId, input.entity_type) }),
});
