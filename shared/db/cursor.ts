import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config/env.js';
import { db, tableName } from './client.js';
import { isConditionFailure } from './records.js';
import { keys } from './table.js';

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

let keyPromise: Promise<Buffer> | undefined;

/**
 * The signing key: `CURSOR_SECRET` when set, otherwise a random key kept in the table
 * (created once per installation, read once per process).
 */
export function cursorKey(): Promise<Buffer> {
  keyPromise ??= (async () => {
    const fromEnv = optionalEnv('CURSOR_SECRET');
    if (fromEnv) return Buffer.from(fromEnv, 'utf8');
    const Key = keys.system('CURSOR_KEY');
    const existing = await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
    if (typeof existing.Item?.secret === 'string') return Buffer.from(existing.Item.secret, 'base64');
    const secret = randomBytes(32).toString('base64');
    try {
      await db().send(new PutCommand({ TableName: tableName(), Item: { ...Key, secret }, ConditionExpression: 'attribute_not_exists(pk)' }));
      return Buffer.from(secret, 'base64');
    } catch (error) {
      // Another process created it first: use theirs. Anything else is an error, never a weak key.
      if (!isConditionFailure(error)) throw error;
      const again = await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
      if (typeof again.Item?.secret !== 'string') throw new Error('cursor key missing after a conflicting create');
      return Buffer.from(again.Item.secret, 'base64');
    }
  })().catch((error) => {
    keyPromise = undefined;
    throw error;
  });
  return keyPromise;
}
