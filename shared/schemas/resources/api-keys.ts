/**
 * API keys (contract §14): the family's operations, declared once (see ../resource.ts). All four
 * need `api_keys:manage` (shared/auth/scopes.ts).
 */
import { apiKeyCreateInput, apiKeyCreateResult, apiKeyIdInput, apiKeyListInput, apiKeyListResult, apiKeySchema, parseApiKeyCreate } from '../api-keys.js';
import { BY_ID, defineResource } from '../resource.js';
import { API_KEY_KEYS } from '../keys/api-keys.js';

const BY_ID_ERRORS = ['api_keys.invalid_id', 'api_keys.not_found'] as const;

export const apiKeysResource = defineResource({
  family: 'api_keys',
  prefix: 'api-keys',
  keys: API_KEY_KEYS,
  components: {
    ApiKey: apiKeySchema,
    ApiKeyCreateInput: apiKeyCreateInput,
    ApiKeyCreateResult: apiKeyCreateResult,
    ApiKeyIdInput: apiKeyIdInput,
    ApiKeyListInput: apiKeyListInput,
    ApiKeyList: apiKeyListResult,
  },
  operations: {
    create: {
      access: 'write',
      summary: 'Create an API key with the given scopes (the token is shown only in this answer)',
      description:
        'The key can do what its `scopes` allow and nothing else; it cannot be given a scope the calling key does not hold, and an unknown scope name is refused too (both `api_keys.invalid_scopes`). ' +
        '`expires_at` (optional, in the future) ends it by itself. `member_id` (optional) binds the key to an active member of the account (else `api_keys.invalid_request`): what it creates has `created_by` the member\'s id, and its events\' `actor` adds `member_id`. The token (`crm_` + 43 base64url characters) is returned here once and stored only as a SHA-256 hash: keep it, or create another key.',
      input: apiKeyCreateInput,
      result: apiKeyCreateResult,
      errors: ['api_keys.invalid_scopes'],
      parse: parseApiKeyCreate,
    },
    list: { access: 'read', items: { reads: ['keyUse'] }, summary: "List the account's API keys, newest first (cursor pagination); revoked and expired keys included", input: apiKeyListInput, result: apiKeyListResult },
    get: { access: 'read', items: { reads: ['keyUse'] }, summary: 'Get an API key (never its token)', input: apiKeyIdInput, result: apiKeySchema, errors: BY_ID_ERRORS, body: BY_ID },
    revoke: {
      access: 'write',
      items: { reads: ['keyUse'] },
      summary: 'Revoke an API key: its token answers 401 from now on (deployed: within the authorizer cache time, at most 60 s)',
      description: 'Returns the key with `revoked_at` set; revoking a revoked key returns it unchanged.',
      input: apiKeyIdInput,
      result: apiKeySchema,
      errors: BY_ID_ERRORS,
      body: BY_ID,
    },
  },
});
