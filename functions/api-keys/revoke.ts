import { revokeApiKey } from '../../shared/domain/api-keys.js';
import { operation } from '../../shared/http/operation.js';
import { parseApiKeyId } from '../../shared/schemas/api-keys.js';

export const handler = operation({ name: 'api-keys-revoke', family: 'api_keys', parse: parseApiKeyId, run: ({ id }, ctx) => revokeApiKey(ctx, id) });
