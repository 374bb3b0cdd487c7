/**
 * The account's rate-limit bucket (contract §14), in the control table (no stream: shared/db/control.ts):
 * one small item per account holding its GCRA
 * "theoretical arrival time" `tat` (epoch microseconds), shared by every key of the account and
 * every Lambda instance. A request is one conditional UpdateItem (1 WCU) in the common case:
 *
 *  - idle:  `SET tat = now + T`    if the item is missing or `tat <= now` (the bucket is full);
 *  - busy:  `SET tat = tat + T`    if `now < tat <= now + (burst − 1)·T` (tokens are left).
 *
 * GCRA's `tat = max(tat, now) + T` needs the branch to be chosen; the caller passes its guess
 * (the last `tat` it saw) and a wrong guess costs one more attempt. When neither condition holds
 * the bucket is empty: the failed write returns the stored `tat` (ReturnValuesOnConditionCheckFailure)
 * so the caller can say when to come back. The pure arithmetic is shared/domain/rate-limit.ts.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { db } from './client.js';
import { controlTableName } from './control.js';
import { isConditionFailure } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

export interface BucketTake {
  /** true: a token was taken and `tat` is the new value; false: empty, `tat` is the stored value. */
  taken: boolean;
  tat: number;
}

/** The stored `tat` of a failed conditional write (undefined when the item is missing). */
function storedTat(error: unknown): number | undefined {
  const item = (error as { Item?: Record<string, AttributeValue | number> }).Item;
  const raw = item?.tat;
  if (raw === undefined) return undefined;
  const n = typeof raw === 'number' ? raw : Number((raw as { N?: string }).N);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Takes one token from the account's bucket at `now` (µs) with interval `t` (µs per request) and
 * `burst`; `busyFirst` is the caller's guess that the bucket is not full. At most three writes
 * (a guess proven wrong by another instance's write in between), usually one.
 */
export async function takeFromBucket(accountId: string, now: number, t: number, burst: number, busyFirst: boolean): Promise<BucketTake> {
  const max = now + (burst - 1) * t;
  const ttlOf = (tat: number) => Math.ceil(tat / 1e6) + 60;
  let busy = busyFirst;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if (busy) {
        const out = await db().send(
          new UpdateCommand({
            TableName: controlTableName(),
            Key: keys.rateLimit(accountId),
            UpdateExpression: 'SET tat = tat + :t, #ttl = :ttl',
            ConditionExpression: 'tat > :now AND tat <= :max',
            ExpressionAttributeNames: { '#ttl': TABLE_DEFINITION.ttlAttribute },
            // The expiry only has to come after the bucket is full again: `max` bounds the new tat.
            ExpressionAttributeValues: { ':t': t, ':now': now, ':max': max, ':ttl': ttlOf(max + t) },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { taken: true, tat: Number(out.Attributes?.tat) };
      }
      await db().send(
        new UpdateCommand({
          TableName: controlTableName(),
          Key: keys.rateLimit(accountId),
          UpdateExpression: 'SET tat = :tat, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
          ExpressionAttributeNames: { '#ttl': TABLE_DEFINITION.ttlAttribute },
          ExpressionAttributeValues: { ':tat': now + t, ':now': now, ':ttl': ttlOf(now + t) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { taken: true, tat: now + t };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const tat = storedTat(error);
      if (tat !== undefined && tat > max) return { taken: false, tat };
      // The other branch holds now (or another instance changed the item in between).
      busy = tat !== undefined && tat > now;
    }
  }
  // Three writes lost to concurrent ones: count the request as over the limit for a moment.
  return { taken: false, tat: max + t };
}
