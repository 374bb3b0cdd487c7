/**
 * The job store's lease (shared/db/job-lease.ts), which every job worker holds a job through
 * (imports, exports, erasures, index builds): one worker at a time, a save refused once another
 * took over, a released or run-out lease taken at once, an ended job never taken again. Against
 * DynamoDB Local, with the index-build store (any job store behaves alike: one `jobStore`).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getIndexBuild, type IndexBuildItem, insertIndexBuild, leaseIndexBuild } from '../../shared/db/index-builds.js';
import { LeaseHeld } from '../../shared/db/job-lease.js';

const LONG = 60_000;
/** A lease that has run out already when it is written (no wait on the clock). */
const RUN_OUT = -1_000;

async function newJob(): Promise<IndexBuildItem> {
  const job: IndexBuildItem = { id: randomUUID(), account_id: `acct_lease_${randomUUID()}`, created_at: new Date().toISOString(), status: 'processing', field_id: 'cf_x', entity_type: 'contact', field_type: 'text', action: 'build', position: 0, done: 0 };
  await insertIndexBuild(job);
  return job;
}
const take = (job: IndexBuildItem, leaseMs = LONG) => leaseIndexBuild(job, { running: 'processing', leaseMs });

describe('a job lease', () => {
  it('goes to one of two workers taking a job at once; the other is told another worker holds it', async () => {
    const job = await newJob();
    const [a, b] = await Promise.allSettled([take(job), take(job)]);
    const won = [a, b].filter((r) => r.status === 'fulfilled' && r.value);
    const refused = [a, b].filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseHeld);
  });

  it('saves progress only at the position it expects, renewing the lease', async () => {
    const job = await newJob();
    const lease = (await take(job))!;
    const before = lease.job.lease_until!;
    const saved = await lease.save({ position: 1, done: 10 }, { position: 0 });
    expect(saved).toMatchObject({ position: 1, done: 10 });
    expect(saved!.lease_until).toBeGreaterThanOrEqual(before);
    expect(lease.job.position).toBe(1);
    // A second save of the same step (a stale position) is refused and changes nothing.
    expect(await lease.save({ position: 1, done: 99 }, { position: 0 })).toBeUndefined();
    expect(await getIndexBuild(job.account_id, job.id)).toMatchObject({ position: 1, done: 10 });
  });

  it('is taken over once it ran out; the old holder’s writes are refused and it learns another worker runs the job', async () => {
    const job = await newJob();
    const old = (await take(job, RUN_OUT))!;
    const next = (await take(job))!;
    expect(next.job.lease_owner).not.toBe(old.job.lease_owner);
    expect(await old.save({ position: 1 }, { position: 0 })).toBeUndefined();
    expect(await old.end({ status: 'completed' })).toBeUndefined();
    await expect(old.lost()).rejects.toBeInstanceOf(LeaseHeld);
    expect(await next.save({ position: 1, done: 5 }, { position: 0 })).toMatchObject({ position: 1, done: 5 });
  });

  it('is not taken from a live holder, but at once once released', async () => {
    const job = await newJob();
    const held = (await take(job))!;
    await expect(take(job)).rejects.toBeInstanceOf(LeaseHeld);
    await held.release();
    const next = await take(job);
    expect(next).toBeDefined();
    expect(await held.save({ position: 1 }, { position: 0 })).toBeUndefined();
  });

  it('ends the job once: it is not taken again, and a late holder learns it ended', async () => {
    const job = await newJob();
    const old = (await take(job, RUN_OUT))!;
    const next = (await take(job))!;
    expect(await next.end({ status: 'completed', completed_at: new Date().toISOString() })).toMatchObject({ status: 'completed', lease_until: 0 });
    expect(await take(job)).toBeUndefined();
    expect(await take((await getIndexBuild(job.account_id, job.id))!)).toBeUndefined();
    expect(await old.save({ position: 1 }, { position: 0 })).toBeUndefined();
    expect(await old.lost()).toBe('completed');
  });
});
