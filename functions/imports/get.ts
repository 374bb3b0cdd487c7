import { getImport } from '../../shared/imports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportId } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-get',
  family: 'imports',
  parse: parseImportId,
  run: ({ id }, ctx) => getImport(ctx, id),
});
