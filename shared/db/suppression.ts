/**
 * Suppressed emails (contract §18): an erasure with `suppress_email` keeps a keyed hash of the
 * address (`keys.suppressedEmail`), never the address; every path that writes an email checks it.
 * Apart from the erasures' store, so that a create's bundle does not carry the job store.
 */
import { createHmac } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { optionalEnv } from '../config/env.js';
import { db, tableName } from './client.js';
import { systemKey } from './system-keys.js';
import { keys } from './table.js';

/**
 * The suppression key: `SUPPRESSION_SECRET` when set, otherwise a random key kept in the table
 * like the cursor key (shared/db/system-keys.ts: created once per installation).
 */
function suppressionKey(): Promise<Buffer> {
  const fromEnv = optionalEnv('SUPPRESSION_SECRET');
  if (fromEnv) return Promise.resolve(Buffer.from(fromEnv, 'utf8'));
  return systemKey('SUPPRESSION_KEY');
}

/**
 * The keyed hash of an email address, case-insensitive (HMAC-SHA-256 of the lower-cased, trimmed
 * address): the suppression entries' key, and the inbound emails' address index (shared/db/inbound-emails.ts).
 */
export async function emailHash(email: string): Promise<string> {
  return createHmac('sha256', await suppressionKey()).update(email.trim().toLowerCase()).digest('base64url');
}

/** Whether an email was suppressed by an erasure of the account. */
export async function isSuppressed(accountId: string, email: string): Promise<boolean> {
  if (!email) return false;
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.suppressedEmail(accountId, await emailHash(email)), ConsistentRead: true }));
  return Boolean(out.Item);
}
