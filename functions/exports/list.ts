import { listExports } from '../../shared/exports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseExportList } from '../../shared/schemas/exports.js';

export const handler = operation({
  name: 'exports-list',
  family: 'exports',
  parse: parseExportList,
  run: (input, ctx) => listExports(ctx, input),
});
