import { updateDefinition } from '../../shared/domain/custom-fields.js';
import { handle } from '../../shared/http/resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'update', (input, ctx) => updateDefinition(ctx, input));
