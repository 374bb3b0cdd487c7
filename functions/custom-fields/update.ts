import { updateIndexedDefinition } from '../../shared/indexing/builds.js';
import { handle } from '../../shared/http/resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'update', (input, ctx) => updateIndexedDefinition(ctx, input));
