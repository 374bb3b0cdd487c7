import { handle } from '../../shared/http/resource.js';
import { getImport } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

export const handler = handle(importsResource, 'get', ({ id }, ctx) => getImport(ctx, id));
