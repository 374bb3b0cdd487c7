import { getExport } from '../../shared/exports/jobs.js';
import { operation } from '../../shared/http/operation.js';
import { parseExportId } from '../../shared/schemas/exports.js';

export const handler = operation({
  name: 'exports-get',
  family: 'exports',
  parse: parseExportId,
  run: ({ id }, ctx) => getExport(ctx, id),
});
