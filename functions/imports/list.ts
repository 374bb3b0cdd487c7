import { listImports } from '../../shared/imports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseImportList } from '../../shared/schemas/imports.js';

export const handler = operation({
  name: 'imports-list',
  family: 'imports',
  parse: parseImportList,
  run: (input, ctx) => listImports(ctx, input),
});
