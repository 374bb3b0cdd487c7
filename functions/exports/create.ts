import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { createExport } from '../../shared/exports/jobs.js';
import { parseExportCreate } from '../../shared/schemas/exports.js';

export const handler = operation({
  name: 'exports-create',
  family: 'exports',
  // A retried exports-create with the same Idempotency-Key returns the first job instead of a second one.
  wrap: idempotentCreate(),
  parse: parseExportCreate,
  run: (input, ctx) => createExport(ctx, input),
});
