import { createSource, sourceBody } from '../../shared/domain/sources.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { parseRecordBody } from '../../shared/schemas/record-body.js';

export const handler = operation({
  name: 'sources-create',
  family: 'sources',
  wrap: idempotentCreate(),
  parse: (body) => parseRecordBody(sourceBody, body, 'create'),
  run: (input, ctx) => createSource(ctx, input),
});
