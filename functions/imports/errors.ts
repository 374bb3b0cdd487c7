import { handle } from '../../shared/http/resource.js';
import { listImportErrors } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

export const handler = handle(importsResource, 'errors', (input, ctx) => listImportErrors(ctx, input));
