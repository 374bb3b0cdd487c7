import { handle } from '../../shared/http/resource.js';
import { startImport } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

export const handler = handle(importsResource, 'start', ({ id }, ctx) => startImport(ctx, id));
