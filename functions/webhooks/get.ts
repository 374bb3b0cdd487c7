import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';
import { getEndpoint } from '../../shared/webhooks/endpoints.js';

export const handler = operation({
  name: 'webhooks-get',
  family: 'webhooks',
  parse: (body) => parseIdOnly('webhooks', body),
  run: ({ id }, ctx) => getEndpoint(ctx, id),
});
