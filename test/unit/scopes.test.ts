/** Scope rules (contract §14), checked against the registry: every family has its scopes, every operation its scope. */
import { describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { covers, requiredScope, scopesFromContext } from '../../shared/auth/scopes.js';
import { ALL_SCOPES, FULL_SCOPES, SCOPE_FAMILIES } from '../../shared/schemas/api-keys.js';
import { buildOpenApiDocument } from '../../shared/openapi/document.js';

/** The contract's words, independently of shared/auth/scopes.ts: which scopes a call needs one of. */
const READ_SUFFIXES = ['-get', '-list', '-deliveries', '-errors', '-address', '-batch-get', '-stage-history', '-summary', '-board'];
function oracle(scope: string, op: { name: string; family: string }): boolean {
  if (op.family === 'api_keys') return scope === 'api_keys:manage';
  const read = READ_SUFFIXES.some((s) => op.name.endsWith(s));
  if (scope === '*') return true;
  if (scope === '*:read') return read;
  return scope === `${op.family}:write` || (read && scope === `${op.family}:read`);
}

describe('scopes', () => {
  it('every family of the registry (but key management) has its read and write scopes', () => {
    for (const op of operations) {
      if (op.family === 'api_keys') continue;
      expect(SCOPE_FAMILIES as readonly string[], op.name).toContain(op.family);
      expect(ALL_SCOPES).toContain(requiredScope(op));
    }
  });

  it('each single scope against every operation of the registry', () => {
    for (const scope of ALL_SCOPES) for (const op of operations) expect(covers([scope], requiredScope(op)), `${scope} → ${op.name}`).toBe(oracle(scope, op));
  });

  it('the scope follows the declaration: access read needs <family>:read, access write <family>:write', () => {
    for (const op of operations.filter((o) => o.family !== 'api_keys')) expect(requiredScope(op), op.name).toBe(`${op.family}:${op.access}`);
  });

  it('write includes read of the same family only; * is everything but key management', () => {
    expect(covers(['contacts:write'], 'contacts:read')).toBe(true);
    expect(covers(['contacts:write'], 'companies:read')).toBe(false);
    expect(covers(['contacts:read'], 'contacts:write')).toBe(false);
    expect(covers(['*'], 'api_keys:manage')).toBe(false);
    expect(covers(['*:read'], '*')).toBe(false);
    expect(covers(['*'], '*:read')).toBe(true);
    expect(covers(['*:read'], 'webhooks:read')).toBe(true);
    expect(covers(['*:read'], 'webhooks:write')).toBe(false);
  });

  it('the authorizer context carries scopes space-separated; none means a full token issued before scopes', () => {
    expect(scopesFromContext('contacts:read *:read')).toEqual(['contacts:read', '*:read']);
    expect(scopesFromContext(['a'])).toEqual(['a']);
    expect(scopesFromContext(undefined)).toEqual(FULL_SCOPES);
    expect(scopesFromContext('')).toEqual([]);
  });

  it('the OpenAPI document names each operation\'s scope, lists every scope, and documents 403 and the RateLimit headers', () => {
    const doc = buildOpenApiDocument(operations) as unknown as { paths: Record<string, { post: Record<string, unknown> & { responses: Record<string, { headers?: Record<string, unknown> }> } }>; components: { securitySchemes: { bearerAuth: { 'x-scopes': Record<string, string> } } } };
    expect(Object.keys(doc.components.securitySchemes.bearerAuth['x-scopes'])).toEqual([...ALL_SCOPES]);
    for (const op of operations) {
      const post = doc.paths[`/api/${op.name}`]!.post;
      expect(post['x-required-scope'], op.name).toBe(oracleScope(op));
      expect(post['x-error-codes'], op.name).toContain('auth.forbidden');
      expect(Object.keys(post.responses['200']!.headers ?? {}), op.name).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
      expect(Object.keys(post.responses['429']!.headers ?? {}), op.name).toContain('Retry-After');
    }
  });
});

function oracleScope(op: { name: string; family: string }): string {
  if (op.family === 'api_keys') return 'api_keys:manage';
  return `${op.family}:${READ_SUFFIXES.some((s) => op.name.endsWith(s)) ? 'read' : 'write'}`;
}
