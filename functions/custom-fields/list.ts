import { listDefinitions } from '../../shared/domain/custom-fields.js';
import { handle } from '../../shared/http/resource.js';
import { customFieldsResource } from '../../shared/schemas/resources/custom-fields.js';

export const handler = handle(customFieldsResource, 'list', async (input, ctx) => ({ items: await listDefinitions(ctx.accountId, input.entity_type) }));
