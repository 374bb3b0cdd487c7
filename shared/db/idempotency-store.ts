/**
 * Where idempotency records live: Powertools' DynamoDBPersistenceLayer on the control table
 * (no stream: shared/db/control.ts), with
 * the record's key the readable, account-scoped pk of `keys.idempotency` instead of Powertools'
 * `<function>#<hash>`; Powertools still does the conditional writes, status, expiry and
 * payload-hash validation (shared/http/idempotency.ts).
 */
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, dbClient } from './client.js';
import { controlTableName } from './control.js';
import { exists, update } from './expr.js';
import { batchWriteItems, isConditionFailure, queryPartition } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

/** What the idempotent call carries: `scope` names the record. */
interface Scoped {
  scope: { accountId: string; operation: string; key: string };
}

class ScopedPersistenceLayer extends DynamoDBPersistenceLayer {
  protected override getHashedIdempotencyKey(data: Parameters<DynamoDBPersistenceLayer['deleteRecord']>[0]): string {
    const { scope } = data as Partial<Scoped>;
    if (!scope) throw new Error('an idempotent call carries its scope');
    return keys.idempotency(scope.accountId, scope.operation, scope.key).pk;
  }
  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return marshall({ pk: idempotencyKey, sk: keys.idempotency('', '', '').sk });
  }
}

let store: ScopedPersistenceLayer | undefined;

export function idempotencyStore(): DynamoDBPersistenceLayer {
  store ??= new ScopedPersistenceLayer({ tableName: controlTableName(), keyAttr: 'pk', expiryAttr: TABLE_DEFINITION.ttlAttribute, awsSdkV3Client: dbClient() });
  return store;
}

// --- erasure (contract §18) -----------------------------------------------------------------------

/** The stored answer an erasure leaves: a replay of the key answers `<family>.not_found` (shared/http/idempotency.ts). */
export const ERASED_ANSWER_ATTR = '__erased';

/**
 * Indexes a stored answer by the records it holds (written after the answer is stored; a lost
 * entry leaves an answer the erasure cannot find, so it is written before the answer returns).
 */
export async function indexIdempotentAnswer(accountId: string, operation: string, key: string, recordIds: readonly string[]): Promise<void> {
  if (recordIds.length === 0) return;
  const ttl = Math.floor(Date.now() / 1000) + ANSWER_INDEX_TTL_SECONDS;
  await batchWriteItems(
    [...new Set(recordIds)].map((recordId) => ({
      PutRequest: { Item: { ...keys.idempotentAnswerOfRecord(accountId, recordId, operation, key), operation, key, [TABLE_DEFINITION.ttlAttribute]: ttl } },
    })),
  );
}
/** As long as an idempotency record lives (24 h) and a little more. */
const ANSWER_INDEX_TTL_SECONDS = 25 * 3600;

/** The stored answers that hold a record (its index partition). */
export async function answersOfRecord(accountId: string, recordId: string): Promise<Array<{ operation: string; key: string }>> {
  const items = await queryPartition<{ operation: string; key: string }>(keys.idempotentAnswerOfRecordPartition(accountId, recordId));
  return items.map((i) => ({ operation: String(i.operation), key: String(i.key) }));
}

/** Replaces a stored answer with the erased marker; false when the record is gone (expired). */
export async function eraseAnswer(accountId: string, operation: string, key: string, recordId: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: controlTableName(),
        Key: keys.idempotency(accountId, operation, key),
        ...update({ set: { data: { [ERASED_ANSWER_ATTR]: recordId } } }, exists()),
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
