import { deleteDefinition } from '../../shared/domain/custom-fields.js';
import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';

export const handler = operation({
  name: 'custom-fields-delete',
  family: 'custom_fields',
  parse: (body) => parseIdOnly('custom_fields', body),
  run: ({ id }, ctx) => deleteDefinition(ctx, id),
});
