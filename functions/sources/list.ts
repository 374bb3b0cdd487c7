import { listSources } from '../../shared/domain/sources.js';
import { operation } from '../../shared/http/operation.js';
import { parseWith } from '../../shared/schemas/common.js';
import { sourceListInput } from '../../shared/schemas/records.js';

export const handler = operation({
  name: 'sources-list',
  family: 'sources',
  parse: (body) => parseWith('sources', sourceListInput, body),
  run: (input, ctx) => listSources(ctx, input),
});
