import { startImport } from '../../shared/imports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportId } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-start',
  family: 'imports',
  parse: parseImportId,
  run: ({ id }, ctx) => startImport(ctx, id),
});
