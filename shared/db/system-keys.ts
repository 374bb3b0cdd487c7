import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { notExists } from './expr.js';
import { isConditionFailure } from './items.js';
import { keys } from './table.js';

const cache = new Map<string, Promise<Buffer>>();

/**
 * An installation-wide random key kept in the table's SYSTEM partition (`keys.system(name)`),
 * created once per installation and read once per process: 32 random bytes, stored base64.
 *
 * Concurrent first uses race on a conditional put; the loser reads the winner's key. Any other
 * failure is an error, never a fallback: a swallowed error must not yield a weak or
 * per-process key. A failed attempt is not cached, so the next call tries again.
 */
export function systemKey(name: string): Promise<Buffer> {
  let pending = cache.get(name);
  if (!pending) {
    pending = createOnce(name).catch((error: unknown) => {
      cache.delete(name);
      throw error;
    });
    cache.set(name, pending);
  }
  return pending;
}

async function createOnce(name: string): Promise<Buffer> {
  const Key = keys.system(name);
  const read = async () => {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
    return typeof out.Item?.secret === 'string' ? Buffer.from(out.Item.secret, 'base64') : undefined;
  };
  const existing = await read();
  if (existing) return existing;
  const secret = randomBytes(32).toString('base64');
  try {
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...Key, secret }, ...notExists() }));
    return Buffer.from(secret, 'base64');
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const theirs = await read();
    if (!theirs) throw new Error(`system key ${name} missing after a conflicting create`);
    return theirs;
  }
}

