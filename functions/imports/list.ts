import { handle } from '../../shared/http/resource.js';
import { listImports } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

export const handler = handle(importsResource, 'list', (input, ctx) => listImports(ctx, input));
