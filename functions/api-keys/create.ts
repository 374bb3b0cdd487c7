import { createApiKey } from '../../shared/domain/api-keys.js';
import { handle } from '../../shared/http/resource.js';
import { apiKeysResource } from '../../shared/schemas/resources/api-keys.js';

export const handler = handle(apiKeysResource, 'create', (input, ctx) => createApiKey(ctx, input));
