import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { optionalEnv } from '../config/env.js';
import { systemKey } from './system-keys.js';

/**
 * Opaque, tamper-proof cursors: `<payload>.<hmac>`. The payload holds the position
 * (`created_at#id` of the last item returned) and a hash of the scope (account, operation,
 * filters), so a cursor is only valid for the request that produced it.
 */
export interface CursorScope {
  accountId: string;
  operation: string;
  filters: unknown;
}

const scopeHash = (scope: CursorScope) =>
  createHash('sha256').update(JSON.stringify([scope.accountId, scope.operation, scope.filters])).digest('base64url').slice(0, 22);

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

export function encodeCursor(position: string, scope: CursorScope, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify({ p: position, s: scopeHash(scope) })).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

/** Returns the position, or undefined when the cursor is malformed, tampered or out of scope. */
export function decodeCursor(cursor: string, scope: CursorScope, key: Buffer): string | undefined {
  const [payload, mac, extra] = cursor.split('.');
  if (!payload || !mac || extra !== undefined) return undefined;
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { p?: unknown; s?: unknown };
    if (typeof parsed.p !== 'string' || parsed.s !== scopeHash(scope)) return undefined;
    return parsed.p;
  } catch {
    return undefined;
  }
}

/**
 * The signing key: `CURSOR_SECRET` when set, otherwise a random key kept in the table
 * (shared/db/system-keys.ts: created once per installation, read once per process).
 */
export function cursorKey(): Promise<Buffer> {
  const fromEnv = optionalEnv('CURSOR_SECRET');
  if (fromEnv) return Promise.resolve(Buffer.from(fromEnv, 'utf8'));
  return systemKey('CURSOR_KEY');
}
