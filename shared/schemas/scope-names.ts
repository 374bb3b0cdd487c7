/**
 * The scope names of API keys (contract §14) and the token's shape: plain constants, no schemas,
 * so the operation pipeline (shared/auth/scopes.ts), which every function carries, does not
 * bundle the API-key operations' schemas (shared/schemas/api-keys.ts re-exports them).
 */
/**
 * The families a scope can name (contract §1 and §14): `<family>:read` and `<family>:write` for
 * each. A family added to the registry must be added here too (test/unit/scopes.test.ts checks).
 */
export const SCOPE_FAMILIES = [
  'contacts',
  'companies',
  'sources',
  'custom_fields',
  'projects',
  'activities',
  'webhooks',
  'imports',
  'inbound_emails',
  'events',
  'trash',
  'exports',
  'erasures',
  'pipelines',
  'members',
  'reassignments',
] as const;

/** Every read (`*:read`), everything but key management (`*`), and key management. */
export const SCOPE_ALL_READ = '*:read';
export const SCOPE_ALL = '*';
export const SCOPE_MANAGE_KEYS = 'api_keys:manage';

/** Every scope name, in a stable order (the OpenAPI document lists them so). */
export const ALL_SCOPES: readonly string[] = [
  ...SCOPE_FAMILIES.flatMap((f) => [`${f}:read`, `${f}:write`]),
  SCOPE_ALL_READ,
  SCOPE_ALL,
  SCOPE_MANAGE_KEYS,
];
const KNOWN = new Set(ALL_SCOPES);
export const isScope = (s: unknown): s is string => typeof s === 'string' && KNOWN.has(s);

/** What the tokens of `CRM_DEV_TOKENS` and of the admin command hold (contract §14). */
export const FULL_SCOPES: readonly string[] = [SCOPE_ALL, SCOPE_MANAGE_KEYS];

/** A token: `crm_` + 43 base64url characters (32 random bytes). */
export const TOKEN_PREFIX = 'crm_';
/** `prefix` of a key: the token's first characters, enough to recognise it in a list. */
export const KEY_PREFIX_LENGTH = 12;
