import { handle } from '../../shared/http/idempotent-resource.js';
import { createImport } from '../../shared/imports/jobs.js';
import { importsResource } from '../../shared/schemas/resources/imports.js';

// A retried imports-create with the same Idempotency-Key returns the first job instead of a second one.
export const handler = handle(importsResource, 'create', (input, ctx) => createImport(ctx, input));
