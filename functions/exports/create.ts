import { createExport } from '../../shared/exports/jobs.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { exportsResource } from '../../shared/schemas/resources/exports.js';

// A retried exports-create with the same Idempotency-Key returns the first job instead of a second one.
export const handler = handle(exportsResource, 'create', (input, ctx) => createExport(ctx, input));
