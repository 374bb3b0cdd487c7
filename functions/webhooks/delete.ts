import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';
import { deleteEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-delete',
  family: 'webhooks',
  parse: (body) => parseIdOnly('webhooks', body),
  run: ({ id }, ctx) => deleteEndpoint(ctx, id),
});
