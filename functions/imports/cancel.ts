import { handle } from '../../shared/http/resource.js';
import { cancelImport } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

export const handler = handle(importsResource, 'cancel', ({ id }, ctx) => cancelImport(ctx, id));
