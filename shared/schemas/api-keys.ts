/**
 * API keys (contract §14): the scope names, the operations' bodies and the key record, as valibot
 * schemas (they also generate the OpenAPI document), and the parse functions that run the
 * contract's checks in its order. Which scope an operation needs is shared/auth/scopes.ts.
 */
import * as v from 'valibot';
import { ApiError } from '../errors.js';
import { cursorString, limitInteger, parseWith, rejectUnknownFields } from './common.js';

export * from './scope-names.js';
import { isScope, SCOPE_FAMILIES } from './scope-names.js';

const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const timestamp = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.metadata({ description, examples: ['2026-11-22T01:16:30.123Z'] }));
const nullableTimestamp = (description: string) => v.pipe(v.nullable(v.pipe(v.string(), v.isoTimestamp())), v.metadata({ description }));

const scopeList = v.pipe(
  v.array(v.string()),
  v.metadata({
    description: `Scopes the key holds: \`<family>:read\` or \`<family>:write\` (write includes read of the same family), \`*:read\` (every read), \`*\` (everything but key management), \`api_keys:manage\`. Families: ${SCOPE_FAMILIES.join(', ')}.`,
    examples: [['contacts:read', 'companies:write']],
  }),
);

// --- inputs -----------------------------------------------------------------------------------

export const apiKeyCreateInput = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be blank'), v.maxLength(200, 'must be at most 200 characters'), v.metadata({ description: 'What the key is for (1–200 characters)', examples: ['Reporting tool'] })),
  scopes: scopeList,
  expires_at: v.optional(
    v.pipe(
      v.nullable(v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp'))),
      v.metadata({ description: 'When the key stops working (a future ISO 8601 timestamp); null or absent: never', examples: ['2027-01-01T00:00:00.000Z'] }),
    ),
  ),
  member_id: v.optional(
    v.pipe(
      v.nullable(uuid),
      v.metadata({
        description: 'The member the key acts for (an active member of the account, else `api_keys.invalid_request`): what it creates has `created_by` the member\'s id, and its events\' `actor` adds `member_id`. Null or absent: none',
        examples: ['7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c'],
      }),
    ),
  ),
});
export type ApiKeyCreateInput = v.InferOutput<typeof apiKeyCreateInput>;

export const apiKeyIdInput = v.strictObject({ id: v.pipe(uuid, v.metadata({ description: 'Id of the key' })) });
export const apiKeyListInput = v.strictObject({ cursor: v.optional(cursorString), limit: v.optional(limitInteger, 25) });
export type ApiKeyListInput = v.InferOutput<typeof apiKeyListInput>;

// --- outputs ----------------------------------------------------------------------------------

export const apiKeySchema = v.object({
  id: v.pipe(uuid, v.metadata({ description: 'Key id (the `actor` id of the changes it makes)' })),
  name: v.string(),
  prefix: v.pipe(v.string(), v.metadata({ description: "The token's first 12 characters, to recognise it (the token itself is shown only once)", examples: ['crm_q3Xk9vTz'] })),
  scopes: v.pipe(v.array(v.string()), v.metadata({ description: 'Scopes the key holds' })),
  expires_at: nullableTimestamp('When the key stops working; null: never'),
  last_used_at: nullableTimestamp('When the key was last used (updated at most once a minute); null until used'),
  revoked_at: nullableTimestamp('When the key was revoked; null while it works'),
  member_id: v.pipe(v.nullable(uuid), v.metadata({ description: 'The member the key acts for (its creations\' `created_by`, its events\' `actor.member_id`); null: none' })),
  created_by: v.pipe(uuid, v.metadata({ description: 'User who created it' })),
  created_at: timestamp('Creation timestamp (ISO 8601 UTC)'),
});
export type ApiKeyRecord = v.InferOutput<typeof apiKeySchema>;

export const apiKeyCreateResult = v.object({
  api_key: apiKeySchema,
  token: v.pipe(v.string(), v.metadata({ description: 'The bearer token (`crm_` + 43 base64url characters): shown only here, stored only as a hash', examples: ['crm_q3Xk9vTzW1m0bE4yJ8r2LcA5sN7uP6dF0hG9iK1oQ2x'] })),
});
export const apiKeyListResult = v.object({ items: v.array(apiKeySchema), next_cursor: v.string() });

// --- parse functions --------------------------------------------------------------------------

/**
 * Unknown scope names are `api_keys.invalid_scopes` (not a shape error); duplicates are dropped,
 * first order kept. Whether the caller may grant them is the domain's check.
 */
export function parseApiKeyCreate(body: Record<string, unknown>): ApiKeyCreateInput {
  rejectUnknownFields('api_keys', body, { allowed: Object.keys(apiKeyCreateInput.entries) });
  const input = parseWith('api_keys', apiKeyCreateInput, body);
  const unknown = input.scopes.filter((s) => !isScope(s));
  if (unknown.length) {
    throw new ApiError('api_keys.invalid_scopes', `unknown scopes: ${unknown.join(', ')}`, unknown.map((s) => ({ path: 'scopes', message: `unknown scope ${JSON.stringify(s).slice(0, 80)}` })));
  }
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0) throw new ApiError('api_keys.invalid_scopes', 'a key needs at least one scope', [{ path: 'scopes', message: 'must not be empty' }]);
  return { ...input, scopes };
}

