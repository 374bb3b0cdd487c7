import { getSource } from '../../shared/domain/sources.js';
import { operation } from '../../shared/http/operation.js';
import { parseIdOnly } from '../../shared/schemas/common.js';

export const handler = operation({
  name: 'sources-get',
  family: 'sources',
  parse: (body) => parseIdOnly('sources', body),
  run: ({ id }, ctx) => getSource(ctx, id),
});
