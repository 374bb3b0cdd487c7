/**
 * An account's places on a job queue (imports, exports, erasures, index builds): what keeps one
 * account to a share of a queue's workers (shared/http/job-handler.ts), and the account's jobs
 * waiting for one (woken one by one as places are given back). Apart from the job store (jobs.ts)
 * so that only the job workers' bundles carry it.
 */
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { eq, exists, is, notExists, or, partition } from './expr.js';
import { batchGetItems, writeUnlessRefused } from './items.js';
import { keys } from './table.js';

/**
 * One try at one of the account's `places` on `queue` for `job` until `until` (epoch ms), reading
 * the places and the job's waiting item in one strongly consistent BatchGetItem: the place it
 * already holds (its message delivered again, or its worker dead and the job resumed), else a
 * free one (or one that ran out: a worker that died without giving it back), else undefined.
 */
async function tryPlace(accountId: string, queue: string, job: string, places: number, until: number): Promise<{ place?: number; waiting: boolean }> {
  const now = Date.now();
  const all = Array.from({ length: places }, (_, i) => keys.jobPlace(accountId, queue, String(i)));
  const waitingKey = keys.jobWaiting(accountId, queue, job);
  const read = new Map((await batchGetItems([...all, waitingKey], { consistent: true })).map((i) => [String(i.sk), i]));
  const waiting = read.has(waitingKey.sk);
  const own = all.find((k) => read.get(k.sk)?.job === job);
  if (own) return { place: Number(own.sk), waiting };
  for (const k of all) {
    const current = read.get(k.sk);
    if (current && Number(current.until) > now) continue;
    const put = {
      TableName: tableName(),
      Item: { ...k, job, until },
      ...or(notExists(), is('until', '<=', now)),
    };
    if (await writeUnlessRefused({ Put: put })) return { place: Number(k.sk), waiting };
  }
  return { waiting };
}

/**
 * Takes one of the account's `places` on `queue` for `job` until `until` (epoch ms): the place's
 * number, or undefined when every place is held by the account's other jobs; then the job is
 * noted as waiting (once, however often it is put back: `releaseJobPlace` wakes it) and was tried
 * once more after that, so a place given back in between is not missed. A job that takes a place
 * waits no more.
 */
export async function claimJobPlace(accountId: string, queue: string, job: string, places: number, until: number): Promise<number | undefined> {
  let tried = await tryPlace(accountId, queue, job, places, until);
  if (tried.place === undefined) {
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.jobWaiting(accountId, queue, job), job } }));
    tried = await tryPlace(accountId, queue, job, places, until);
  }
  if (tried.place !== undefined && tried.waiting) await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.jobWaiting(accountId, queue, job) }));
  return tried.place;
}

/**
 * Gives back the place `job` holds (once it is not running: done, handed over, or failed), and
 * takes one of the account's waiting jobs off the list to wake for it: its id, or undefined when
 * none waits. Two callers never take the same one (a conditional delete).
 */
export async function releaseJobPlace(accountId: string, queue: string, place: number, job: string): Promise<string | undefined> {
  await writeUnlessRefused({
    Delete: { TableName: tableName(), Key: keys.jobPlace(accountId, queue, String(place)), ...eq('job', job) },
  });
  const { pk, sk } = keys.jobWaiting(accountId, queue, '');
  const out = await db().send(
    new QueryCommand({ TableName: tableName(), ...partition(pk, ['begins_with', sk]), ConsistentRead: true, Limit: 5 }),
  );
  for (const item of out.Items ?? []) {
    const taken = await writeUnlessRefused({ Delete: { TableName: tableName(), Key: { pk: item.pk, sk: item.sk }, ...exists() } });
    if (taken) return String(item.job);
  }
  return undefined;
}
