import { createApiKey } from '../../shared/domain/api-keys.js';
import { operation } from '../../shared/http/operation.js';
import { parseApiKeyCreate } from '../../shared/schemas/api-keys.js';

export const handler = operation({ name: 'api-keys-create', family: 'api_keys', parse: parseApiKeyCreate, run: (input, ctx) => createApiKey(ctx, input) });
