import { getApiKey } from '../../shared/domain/api-keys.js';
import { handle } from '../../shared/http/resource.js';
import { apiKeysResource } from '../../shared/schemas/resources/api-keys.js';

export const handler = handle(apiKeysResource, 'get', ({ id }, ctx) => getApiKey(ctx, id));
