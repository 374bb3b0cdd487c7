/**
 * The account's rate-limit bucket (contract §14), in the control table (no stream: shared/db/control.ts):
 * one small item per account holding its GCRA
 * "theoretical arrival time" `tat` (epoch microseconds), shared by every key of the account and
 * every Lambda instance. An instance takes a lease of `k` tokens (shared/domain/rate-limit.ts) in
 * one conditional UpdateItem (1 WCU) in the common case:
 *
 *  - idle:  `SET tat = now + k·T`    if the item is missing or `tat <= now` (the bucket is full);
 *  - busy:  `SET tat = tat + k·T`    if `now < tat <= now + (burst − k)·T` (k tokens are left).
 *
 * GCRA's `tat = max(tat, now) + k·T` needs the branch to be chosen; the caller passes its guess
 * (the last `tat` it saw) and a wrong guess costs one more attempt. When neither condition holds
 * the failed write returns the stored `tat` (ReturnValuesOnConditionCheckFailure): the bucket is
 * empty (the caller can say when to come back) or holds fewer than `k` tokens (the next attempt
 * asks for those). The pure arithmetic is `takeTokens` in shared/domain/rate-limit.ts.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { db } from './client.js';
import { controlTableName } from './control.js';
import { isConditionFailure } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

export interface BucketTake {
  /** Tokens taken (1 … want) and `tat` is the new value; 0: the bucket is empty, `tat` is the stored value. */
  taken: number;
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
 * Takes up to `want` tokens (a lease, shared/domain/rate-limit.ts) from the account's bucket at
 * `now` (µs) with interval `t` (µs per token) and `burst`; `busyFirst` is the caller's guess that
 * the bucket is not full. One conditional write when the guess holds and `want` tokens are left;
 * when fewer are left, the failed write returns the stored `tat` and the next one asks for what is
 * there. At most three writes; `taken: 0` when the bucket is empty (`tat`: the stored value).
 */
export async function takeFromBucket(accountId: string, now: number, t: number, burst: number, want: number, busyFirst: boolean): Promise<BucketTake> {
  const ttlOf = (tat: number) => Math.ceil(tat / 1e6) + 60;
  let busy = busyFirst;
  let k = Math.max(1, Math.min(burst, Math.floor(want)));
  for (let attempt = 0; attempt < 3; attempt++) {
    // Room for k tokens: the new tat stays within burst·T of now.
    const max = now + (burst - k) * t;
    try {
      if (busy) {
        const out = await db().send(
          new UpdateCommand({
            TableName: controlTableName(),
            Key: keys.rateLimit(accountId),
            UpdateExpression: 'SET tat = tat + :kt, #ttl = :ttl',
            ConditionExpression: 'tat > :now AND tat <= :max',
            ExpressionAttributeNames: { '#ttl': TABLE_DEFINITION.ttlAttribute },
            // The expiry only has to come after the bucket is full again: `max + k·T` bounds the new tat.
            ExpressionAttributeValues: { ':kt': k * t, ':now': now, ':max': max, ':ttl': ttlOf(max + k * t) },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { taken: k, tat: Number(out.Attributes?.tat) };
      }
      await db().send(
        new UpdateCommand({
          TableName: controlTableName(),
          Key: keys.rateLimit(accountId),
          UpdateExpression: 'SET tat = :tat, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
          ExpressionAttributeNames: { '#ttl': TABLE_DEFINITION.ttlAttribute },
          ExpressionAttributeValues: { ':tat': now + k * t, ':now': now, ':ttl': ttlOf(now + k * t) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { taken: k, tat: now + k * t };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const tat = storedTat(error);
      const left = tat === undefined ? burst : Math.max(0, Math.floor((burst * t - Math.max(0, tat - now)) / t));
      if (tat !== undefined && left === 0) return { taken: 0, tat };
      // The other branch holds now, or fewer tokens are left than asked for (another instance wrote in between).
      busy = tat !== undefined && tat > now;
      k = Math.min(k, left);
    }
  }
  // Three writes lost to concurrent ones: count the request as over the limit for a moment.
  return { taken: 0, tat: now + burst * t };
}
