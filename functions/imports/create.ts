import { createImport } from '../../shared/domain/imports.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportCreate } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-create',
  family: 'imports',
  parse: parseImportCreate,
  run: (input, ctx) => createImport(ctx, input),
});
