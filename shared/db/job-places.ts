/**
 * An account's places on a job queue (imports, exports, erasures, index builds): what keeps one
 * account to a share of a queue's workers (shared/http/job-handler.ts), and the account's jobs
 * waiting for one (woken one by one as places are given back). Apart from the job store (jobs.ts)
 * so that only the job workers' bundles carry it.
 */
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { batchGetItems, writeUnlessRefused } from './items.js';
import { keys } from './table.js';

/**
 * Takes one of the account's `places` on `queue` for `job` until `until` (epoch ms), or finds the
 * one it already holds (its message delivered again, or its worker dead and the job resumed):
 * the place's number, or undefined when every place is held by the account's other jobs. A place
 * that ran out (a worker that died without giving it back) is free again.
 */
export async function takeJobPlace(accountId: string, queue: string, job: string, places: number, until: number, now: number = Date.now()): Promise<number | undefined> {
  const all = Array.from({ length: places }, (_, i) => keys.jobPlace(accountId, queue, String(i)));
  const held = new Map((await batchGetItems(all, { consistent: true })).map((i) => [String(i.sk), i]));
  const own = all.find((k) => held.get(k.sk)?.job === job);
  if (own) return Number(own.sk);
  for (const k of all) {
    const current = held.get(k.sk);
    if (current && Number(current.until) > now) continue;
    const put = {
      TableName: tableName(),
      Item: { ...k, job, until },
      ConditionExpression: 'attribute_not_exists(pk) OR #u <= :now',
      ExpressionAttributeNames: { '#u': 'until' },
      ExpressionAttributeValues: { ':now': now },
    };
    if (await writeUnlessRefused({ Put: put })) return Number(k.sk);
  }
  return undefined;
}

/** Gives back the place `job` holds (once it is not running: done, handed over, or failed). */
export async function releaseJobPlace(accountId: string, queue: string, place: number, job: string): Promise<void> {
  await writeUnlessRefused({
    Delete: { TableName: tableName(), Key: keys.jobPlace(accountId, queue, String(place)), ConditionExpression: '#j = :j', ExpressionAttributeNames: { '#j': 'job' }, ExpressionAttributeValues: { ':j': job } },
  });
}

/** Notes that `job` waits for one of the account's places on `queue` (once per job, however often it is put back). */
export async function waitForJobPlace(accountId: string, queue: string, job: string): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.jobWaiting(accountId, queue, job), job } }));
}

/** `job` waits no more (it took a place). */
export async function stopWaitingForJobPlace(accountId: string, queue: string, job: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.jobWaiting(accountId, queue, job) }));
}

/**
 * Takes one of the account's waiting jobs off the list, to wake it for the place just given back:
 * its id, or undefined when none waits. Two callers never take the same one (a conditional delete).
 */
export async function takeWaitingJob(accountId: string, queue: string): Promise<string | undefined> {
  const { pk, sk } = keys.jobWaiting(accountId, queue, '');
  const out = await db().send(
    new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :p AND begins_with(sk, :w)', ExpressionAttributeValues: { ':p': pk, ':w': sk }, ConsistentRead: true, Limit: 5 }),
  );
  for (const item of out.Items ?? []) {
    const taken = await writeUnlessRefused({ Delete: { TableName: tableName(), Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'attribute_exists(pk)' } });
    if (taken) return String(item.job);
  }
  return undefined;
}
