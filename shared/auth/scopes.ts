/**
 * Which scope an operation needs, and whether a key's scopes cover it (contract §14). The one
 * place both questions are answered: the operation pipeline (shared/http/operation.ts) checks
 * every call with it, api-keys-create checks what a key may grant with it, and the OpenAPI
 * document lists each operation's scope from it. Pure: no storage.
 */
import type { Family } from '../errors.js';
import { FULL_SCOPES, SCOPE_ALL, SCOPE_ALL_READ, SCOPE_MANAGE_KEYS } from '../schemas/scope-names.js';

/** What an operation does to its family's records, as its declaration says (`access`, shared/schemas/resource.ts). */
export type ScopeAccess = 'read' | 'write';

/**
 * The scope an operation needs, from its declaration (family and `access`): `api_keys:manage`
 * for key management, else `<family>:<access>`.
 */
export function requiredScope(entry: { family: Family; access: ScopeAccess }): string {
  if (entry.family === 'api_keys') return SCOPE_MANAGE_KEYS;
  return `${entry.family}:${entry.access}`;
}

/**
 * Whether held scopes cover a wanted one: the scope itself; `<family>:write` covers
 * `<family>:read`; `*` covers every family scope and `*:read`; `*:read` covers every read.
 * `api_keys:manage` is covered only by itself (`*` is everything but key management).
 */
export function covers(held: readonly string[], wanted: string): boolean {
  if (held.includes(wanted)) return true;
  if (wanted === SCOPE_MANAGE_KEYS) return false;
  if (held.includes(SCOPE_ALL)) return true;
  if (wanted === SCOPE_ALL || wanted === SCOPE_ALL_READ) return false;
  const [family, access] = wanted.split(':');
  if (access === 'read') return held.includes(SCOPE_ALL_READ) || held.includes(`${family}:write`);
  return false;
}

/**
 * Scopes as the authorizer passes them (a space-separated string: API Gateway's authorizer
 * context holds only strings, numbers and booleans). A context without them comes from a token
 * issued before scopes existed (or a cached decision of the previous authorizer version): such
 * tokens hold `*` and `api_keys:manage`, as the contract says of existing tokens.
 */
export function scopesFromContext(value: unknown): readonly string[] {
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  return FULL_SCOPES;
}
