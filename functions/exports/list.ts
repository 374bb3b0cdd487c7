import { listExports } from '../../shared/exports/jobs.js';
import { handle } from '../../shared/http/resource.js';
import { exportsResource } from '../../shared/schemas/resources/exports.js';

export const handler = handle(exportsResource, 'list', (input, ctx) => listExports(ctx, input));
