import { listImportErrors } from '../../shared/imports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportErrors } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-errors',
  family: 'imports',
  parse: parseImportErrors,
  run: (input, ctx) => listImportErrors(ctx, input),
});
