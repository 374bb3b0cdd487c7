/**
 * The API description of the API-key operations (contract §14; see operations.ts for the shape
 * of an entry).
 */
import type * as v from 'valibot';
import { apiKeyCreateInput, apiKeyCreateResult, apiKeyIdInput, apiKeyListInput, apiKeyListResult, apiKeySchema } from '../schemas/api-keys.js';
import type { OperationDoc } from './doc-types.js';

/** Named component schemas of the API-key operations. */
export const apiKeyComponentSchemas: Record<string, v.GenericSchema> = {
  ApiKey: apiKeySchema,
  ApiKeyCreateInput: apiKeyCreateInput,
  ApiKeyCreateResult: apiKeyCreateResult,
  ApiKeyIdInput: apiKeyIdInput,
  ApiKeyListInput: apiKeyListInput,
  ApiKeyList: apiKeyListResult,
};

const BY_ID = ['api_keys.invalid_id', 'api_keys.not_found'] as const;

export const apiKeyOperationDocs = {
  'api-keys-create': {
    summary: 'Create an API key with the given scopes (the token is shown only in this answer)',
    description:
      'The key can do what its `scopes` allow and nothing else; it cannot be given a scope the calling key does not hold, and an unknown scope name is refused too (both `api_keys.invalid_scopes`). ' +
      '`expires_at` (optional, in the future) ends it by itself. The token (`crm_` + 43 base64url characters) is returned here once and stored only as a SHA-256 hash: keep it, or create another key.',
    input: apiKeyCreateInput,
    result: apiKeyCreateResult,
    errors: ['api_keys.invalid_scopes'],
  },
  'api-keys-list': { summary: "List the account's API keys, newest first (cursor pagination); revoked and expired keys included", input: apiKeyListInput, result: apiKeyListResult },
  'api-keys-get': { summary: 'Get an API key (never its token)', input: apiKeyIdInput, result: apiKeySchema, errors: BY_ID },
  'api-keys-revoke': {
    summary: 'Revoke an API key: its token answers 401 from now on (deployed: within the authorizer cache time, at most 60 s)',
    description: 'Returns the key with `revoked_at` set; revoking a revoked key returns it unchanged.',
    input: apiKeyIdInput,
    result: apiKeySchema,
    errors: BY_ID,
  },
} satisfies Record<string, OperationDoc>;
