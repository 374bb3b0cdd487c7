/**
 * An account's places on a job queue (imports, exports, erasures, index builds): what keeps one
 * account to a share of a queue's workers (shared/http/job-handler.ts). Apart from the job store
 * (jobs.ts) so that only the job workers' bundles carry it.
 */
import { tableName } from './client.js';
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
