import { updateSource, sourceBody } from '../../shared/domain/sources.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'sources-update',
  family: 'sources',
  parse: (body) => parseRecordBody(sourceBody, body, 'update'),
  run: (input, ctx) => updateSource(ctx, input),
});
