import { deleteDefinition } from '../../shared/domain/custom-fields.js';
import { handle } from '../../shared/http/resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'delete', ({ id }, ctx) => deleteDefinition(ctx, id));
