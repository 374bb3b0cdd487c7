import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/db/client.js';
import { cursorKey } from '../../shared/db/cursor.js';
import { systemKey } from '../../shared/db/system-keys.js';
import { keys } from '../../shared/db/table.js';
import { localSecretBox, secretBox } from '../../shared/webhooks/secrets.js';

/** The one create-once routine for installation keys (shared/db/system-keys.ts), used by cursors and webhook secrets. */
describe('system keys', () => {
  it('creates a 32-byte key once: concurrent first uses all get the same key', async () => {
    const name = `TEST_KEY_${randomUUID()}`;
    const keysSeen = await Promise.all(Array.from({ length: 8 }, () => systemKey(name)));
    expect(keysSeen[0]).toHaveLength(32);
    for (const k of keysSeen) expect(k.equals(keysSeen[0]!)).toBe(true);
  });

  it('never falls back to a weak key: a stored key it cannot read is an error, and the error is not cached', async () => {
    const name = `TEST_KEY_${randomUUID()}`;
    // An unreadable stored value: the conditional create fails (the item exists) and the re-read finds no key.
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.system(name), secret: 42 } }));
    await expect(systemKey(name)).rejects.toThrow(/missing after a conflicting create/);
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.system(name), secret: Buffer.alloc(32, 7).toString('base64') } }));
    expect((await systemKey(name)).equals(Buffer.alloc(32, 7))).toBe(true);
  });

  it('the webhook secret box and the cursor key use it', async () => {
    delete process.env.WEBHOOK_SECRET_KEY_ID;
    delete process.env.CURSOR_SECRET;
    const ctx = { accountId: randomUUID(), endpointId: randomUUID() };
    const sealed = await secretBox().encrypt('whsec_x', ctx);
    expect(await localSecretBox(() => systemKey('WEBHOOK_SECRET_KEY')).decrypt(sealed, ctx)).toBe('whsec_x');
    expect((await cursorKey()).equals(await systemKey('CURSOR_KEY'))).toBe(true);
  });
});
