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
import { dbClient } from './client.js';
import { controlTableName } from './control.js';
import { keys, TABLE_DEFINITION } from './table.js';

/** What the idempotent call carries: `scope` names the record. */
interface Scoped {
  scope: { accountId: string; operation: string; key: string };
}

class ScopedPersistenceLayer extends DynamoDBPersistenceLayer {
  protected override getHashedIdempotencyKey(data: Parameters<DynamoDBPersistenceLayer['deleteRecord']>[0]): string {
    const { scope } = data as unknown as Scoped;
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
