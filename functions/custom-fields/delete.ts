import { deleteIndexedDefinition } from '../../shared/indexing/builds.js';
import { handle } from '../../shared/http/resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'delete', ({ id }, ctx) => deleteIndexedDefinition(ctx, id));
