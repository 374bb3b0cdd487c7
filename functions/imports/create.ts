import { idempotentCreate } from '../../shared/http/idempotency.js';
import { operation } from '../../shared/http/operation.js';
import { createImport } from '../../shared/imports/jobs.js';
import { parseImportCreate } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-create',
  family: 'imports',
  // A retried imports-create with the same Idempotency-Key returns the first job instead of a second one.
  wrap: idempotentCreate(),
  parse: parseImportCreate,
  run: (input, ctx) => createImport(ctx, input),
});
