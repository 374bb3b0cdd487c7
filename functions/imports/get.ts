import { getImport } from '../../shared/domain/imports.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportId } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-get',
  family: 'imports',
  parse: parseImportId,
  run: ({ id }, ctx) => getImport(ctx, id),
});
