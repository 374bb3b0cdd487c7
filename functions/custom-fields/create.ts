import { createIndexedDefinition } from '../../shared/indexing/builds.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'create', (input, ctx) => createIndexedDefinition(ctx, input));
