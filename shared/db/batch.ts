/**
 * Bulk writes of new records (contract §13 batches; the import worker): BatchWriteItem, 25 items a
 * call and several calls at once, unprocessed items retried with back-off (`batchWriteItems`).
 *
 * A put through BatchWriteItem costs one write unit per KB where a transaction costs two, so a
 * batch of creates costs at most what the same creates cost one by one. BatchWriteItem is not
 * atomic, so the order keeps every record whole: all index entries first, then the records. A
 * record that can be read therefore always has its entries; an interrupted batch can leave entries
 * without a record, which cost a read but are never returned (every list re-checks the record).
 * Each record's INSERT raises its `*.created` event from the stream, as a single create does.
 */
import { createHash } from 'node:crypto';
import { backoff } from '../backoff.js';
import { tableName as table } from './client.js';
import { cancellationCodes, eq, notExists, transact, type TransactItem } from './expr.js';
import { batchGetItems, batchGetRecords, batchWriteItems, type StoredRecord, type WriteRequest, writeUnlessRefused } from './items.js';
import { type EntityType, keys } from './table.js';
import { type CreateArgs, type EntityModel, newRecordItems, settleIndexed } from './writes.js';

/** Calls of 25 items in flight at once. */
const PARALLEL_CALLS = 8;

/** Puts items with BatchWriteItem (25 a call, PARALLEL_CALLS calls at once). */
export async function putItems(items: Record<string, unknown>[]): Promise<void> {
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })));
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) await batchWriteItems(chunks[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_CALLS, chunks.length) }, worker));
}

export type NewRecord = Omit<CreateArgs, 'checks'>;

/**
 * Creates records in bulk: their index entries, then the records. With `skipExisting`, records
 * whose id already exists are left as they are (an import chunk applied again after a crash: its
 * ids are derived from its rows) and returned as stored. Returns the records in input order.
 */
export async function createRecords(model: EntityModel, records: readonly NewRecord[], opts: { skipExisting?: boolean } = {}): Promise<StoredRecord[]> {
  if (records.length === 0) return [];
  const existing = new Map<string, StoredRecord>();
  if (opts.skipExisting) {
    const byAccount = new Map<string, string[]>();
    for (const r of records) if (r.id) byAccount.set(r.accountId, [...(byAccount.get(r.accountId) ?? []), r.id]);
    for (const [accountId, ids] of byAccount) for (const [id, rec] of await batchGetRecords(model.type, accountId, ids)) existing.set(`${accountId}/${id}`, rec);
  }
  const custom = new Map(await Promise.all([...new Set(records.map((r) => r.accountId))].map(async (a) => [a, await model.indexedCustom(a)] as const)));
  const built = records.map((r) => ({
    stored: existing.get(`${r.accountId}/${r.id}`),
    made: existing.has(`${r.accountId}/${r.id}`) ? undefined : newRecordItems(model, r, r.now, r.id, custom.get(r.accountId)),
  }));
  const made = built.flatMap((b) => (b.made ? [b.made] : []));
  await putItems(made.flatMap((m) => m.entries));
  await putItems(made.map((m) => m.item));
  for (const [accountId, seen] of custom) {
    const mine = made.filter((m) => m.record.account_id === accountId).map((m) => ({ id: m.record.id, images: [m.record] }));
    await settleIndexed(model, accountId, seen, mine);
  }
  return built.map((b) => b.stored ?? b.made!.record);
}

/** Records of one type by id, strongly consistent (what a batch's reference checks and `-batch-get` read). */
export async function readRecords(type: EntityType, accountId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>> {
  const items = await batchGetItems([...new Set(ids)].map((id) => keys.record(accountId, type, id)), { consistent: true });
  return new Map(items.map((item) => [String(item.id), item as StoredRecord]));
}

// --- upsert claims (contract §13: upserts are atomic per key) -------------------------------

/** An upsert claim as read: `n` creates by upserts of the key so far (0: none), the last one's record id and when it was claimed (ms). */
export interface UpsertClaim {
  n: number;
  id?: string;
  at?: number;
}

/** The claim item's key part for a normalized lookup key: a digest, so the item holds no address. */
const claimKey = (type: EntityType, accountId: string, key: string) => keys.upsertClaim(accountId, type, createHash('sha256').update(key).digest('base64url'));

/** The claims of normalized lookup keys, strongly consistent (absent: `{ n: 0 }`). */
export async function readClaims(type: EntityType, accountId: string, lookupKeys: readonly string[]): Promise<Map<string, UpsertClaim>> {
  const distinct = [...new Set(lookupKeys)];
  const byPk = new Map(distinct.map((k) => [claimKey(type, accountId, k).pk, k]));
  const found = await batchGetItems(distinct.map((k) => claimKey(type, accountId, k)), { consistent: true });
  const out = new Map<string, UpsertClaim>(distinct.map((k) => [k, { n: 0 }]));
  for (const item of found) out.set(byPk.get(String(item.pk))!, { n: Number(item.n ?? 0), ...(typeof item.id === 'string' ? { id: item.id } : {}), ...(typeof item.at === 'number' ? { at: item.at } : {}) });
  return out;
}

/** Removes a key's claim when it names `id` (an erased record, contract §18: the digest identifies the person's address). */
export async function releaseClaim(type: EntityType, accountId: string, key: string, id: string): Promise<void> {
  await writeUnlessRefused({ Delete: { TableName: table(), Key: claimKey(type, accountId, key), ...eq('id', id) } });
}

/** The conditional put that takes a key's claim for `id`, only if nobody took it since `seen` was read. */
const claimPut = (type: EntityType, accountId: string, key: string, seen: UpsertClaim, id: string, at: number): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...claimKey(type, accountId, key), n: seen.n + 1, id, at },
    ...(seen.n === 0 ? notExists() : eq('n', seen.n)),
  },
});

/** Claims per transaction (DynamoDB's limit is 100 items). */
const CLAIMS_PER_TRANSACTION = 100;

/**
 * Takes the claims of many keys at once (a batch upsert's creates): one transaction per 100
 * keys, not a write per key. A transaction refused by some claims' conditions (another upsert
 * took them first) says which: those are lost, and the rest is tried again without them.
 * Returns the keys taken. A key given twice is taken once, for its first claim.
 */
export async function takeClaims(type: EntityType, accountId: string, claims: ReadonlyArray<{ key: string; seen: UpsertClaim; id: string }>, at: number = Date.now()): Promise<Set<string>> {
  const taken = new Set<string>();
  const keysSeen = new Set<string>();
  const distinct = claims.filter((c) => !keysSeen.has(c.key) && keysSeen.add(c.key));
  for (let start = 0; start < distinct.length; start += CLAIMS_PER_TRANSACTION) {
    let chunk = distinct.slice(start, start + CLAIMS_PER_TRANSACTION);
    for (let attempt = 0; chunk.length > 0; attempt++) {
      // A transaction cancelled without a refused claim (a conflict with a concurrent one) is tried again too.
      const refused = await transact(chunk.map((c) => claimPut(type, accountId, c.key, c.seen, c.id, at))).catch((error: unknown) => {
        if (!cancellationCodes(error) || attempt >= 8) throw error;
        return { at: [] as number[], error };
      });
      if (!refused) {
        for (const c of chunk) taken.add(c.key);
        break;
      }
      if (attempt >= 8) throw refused.error;
      // Refused: lost to another upsert. Otherwise a conflict with a concurrent transaction: again after a pause.
      if (refused.at.length) chunk = chunk.filter((_, i) => !refused.at.includes(i));
      else await backoff(attempt, 10, 250);
    }
  }
  return taken;
}

