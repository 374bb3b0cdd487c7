import { listApiKeys } from '../../shared/domain/api-keys.js';
import { operation } from '../../shared/http/operation.js';
import { parseApiKeyList } from '../../shared/schemas/api-keys.js';

export const handler = operation({ name: 'api-keys-list', family: 'api_keys', parse: parseApiKeyList, run: (input, ctx) => listApiKeys(ctx, input) });
