/**
 * What a one-field `contacts-update` sends to DynamoDB, through the real operation handler (the
 * rate limiter's bucket and the API key's last use included; the local durability barrier after a
 * transaction is on its own client and not counted: it does not exist deployed). The update path
 * reads the account's META item once (docs/performance.md, "Updates").
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureCapacity } from '../../shared/db/capacity.js';
import { dbClient } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import { newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };

interface Sent {
  command: string;
  /** The keys a GetItem/BatchGetItem read, or the table a write wrote. */
  reads: string[];
}

/** Every DynamoDB request sent while `recording` is set, with what it read. */
let recording: Sent[] | undefined;
beforeAll(() => {
  dbClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: unknown; sk?: unknown }; RequestItems?: Record<string, { Keys?: Array<{ pk?: unknown; sk?: unknown }> }> };
      const keysOf = (k: { pk?: unknown; sk?: unknown }) => `${String(k.pk)}|${String(k.sk)}`;
      const reads = input.Key ? [keysOf(input.Key)] : Object.values(input.RequestItems ?? {}).flatMap((r) => (r.Keys ?? []).map(keysOf));
      recording?.push({ command: context.commandName ?? '', reads });
      return next(args);
    },
    { step: 'initialize', name: 'updateRequestsRecorder' },
  );
});

const rateLimitBefore = process.env.CRM_RATE_LIMIT;
afterAll(() => {
  process.env.CRM_RATE_LIMIT = rateLimitBefore;
});

/**
 * Runs `fn` as the operation runs deployed at its most expensive: the account's first request
 * on this instance with the rate limit on (one write of its bucket) and the key's first use
 * (one write of its `last_used_at`).
 */
async function measured<T>(fn: () => Promise<T>) {
  process.env.CRM_RATE_LIMIT = '100,200';
  recording = [];
  try {
    const { result, usage } = await measureCapacity(fn);
    return { result, usage, sent: recording };
  } finally {
    recording = undefined;
    process.env.CRM_RATE_LIMIT = rateLimitBefore;
  }
}

describe('a one-field contacts-update', () => {
  const auth = newAccount();
  let company: Rec;
  let contact: Rec;
  let metaKey = '';
  beforeAll(async () => {
    company = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    await ok('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'text' }, auth);
    contact = await ok<Rec>('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', company_id: company.id, tags: ['vip'] }, auth);
    const meta = keys.accountMeta(auth.accountId);
    metaKey = `${meta.pk}|${meta.sk}`;
  });

  it('sends at most 7 requests and reads the account META item once', async () => {
    // A new key: its first use writes its last_used_at.
    const { result, usage, sent } = await measured(() => ok<Rec>('contacts-update', { id: contact.id, city: 'London' }, { ...auth, keyId: randomUUID() }));
    const listed = JSON.stringify(sent.map((s) => s.command));
    expect(result).toMatchObject({ id: contact.id, city: 'London', company_id: company.id, company_name: 'Acme', tags: ['vip'] });
    // The limiter's bucket and the key's use (control table), the record and META in one read, the
    // write stamp's sort-ordered entry put, the record's conditional update, the old entry deleted.
    expect(sent.length, listed).toBeLessThanOrEqual(7);
    expect(usage.calls).toBe(sent.length);
    expect(sent.filter((s) => s.reads.includes(metaKey)), listed).toHaveLength(1);
  });

  it('of a sorted field reads META once too; its entry moves beside the write (a put and a delete more)', async () => {
    const { result, sent } = await measured(() => ok<Rec>('contacts-update', { id: contact.id, last_name: 'Byron' }, { ...auth, keyId: randomUUID() }));
    const listed = JSON.stringify(sent.map((s) => s.command));
    expect(result).toMatchObject({ id: contact.id, last_name: 'Byron', company_name: 'Acme' });
    expect(sent.filter((s) => s.reads.includes(metaKey)), listed).toHaveLength(1);
    expect(sent.length, listed).toBeLessThanOrEqual(8);
  });
});
