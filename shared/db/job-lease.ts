/**
 * How a worker holds a job of a job store (jobs.ts): the lease (one worker at a time; every write
 * conditional on it; a dead worker's job taken over once its lease ran out) and local mode's
 * recovery of lost messages. Apart from the store so that only the job workers' bundles (and
 * local mode) carry it: the API operations that create and read jobs do not.
 */
import { randomUUID } from 'node:crypto';
import type { Job, jobStore } from './jobs.js';

/** A family's job store (jobs.ts `jobStore`). */
type JobStore<T extends Job<S>, S extends string> = Pick<ReturnType<typeof jobStore<T, string, S>>, 'get' | 'update' | 'listActive' | 'clearActive' | 'idAttr'>;

/** Another worker holds the job's lease: the message must come back later, in case that worker dies. */
export class LeaseHeld extends Error {}

/** Which saved state a leased write expects (default: the running status, any position). */
export interface LeasedCondition<S extends string> {
  statusIn?: readonly S[];
  position?: number;
}

/**
 * A job held by one worker (`leaseJob`): every write is conditional on the lease, and
 * one that finds the lease lost returns undefined; `lost` then says why.
 */
export interface JobLease<T, S extends string> {
  /** The job as this worker last wrote it. */
  readonly job: T;
  /** Saves progress (`set`, counters `add`) and renews the lease; the job as written, or undefined when lost. */
  save(set: Partial<T>, cond?: LeasedCondition<S>, add?: Record<string, number>): Promise<T | undefined>;
  /** The last write (completed, failed, superseded): ends the lease; the job as written, or undefined when lost. */
  end(set: Partial<T>, cond?: LeasedCondition<S>): Promise<T | undefined>;
  /** Lets the next delivery take the job at once (handed over, or the worker failed): best effort. */
  release(statusIn?: readonly S[]): Promise<void>;
  /**
   * After a write found the lease lost: throws LeaseHeld when another worker runs the job (its
   * message must come back in case that worker dies), else the job's status now (it ended or was
   * canceled meanwhile; undefined: gone).
   */
  lost(): Promise<S | undefined>;
}

/** How a worker takes a job (`leaseJob`). */
export interface LeaseTerms<T, S extends string> {
  /** The status of a job a worker runs. */
  running: S;
  /** The status of a job no worker has started yet (it becomes `running`, with `started` set). */
  from?: S;
  started?: Partial<T>;
  /** Set whenever the job is taken (`add`: counters added), started or taken over. */
  set?: Partial<T>;
  add?: Record<string, number>;
  /** How long the lease lasts without a save: a dead worker's job is taken over after it. */
  leaseMs: number;
}

/**
 * Takes the job for one worker: a job in `from` starts (becomes `running`); a `running` one is
 * taken over once its lease ran out (or at once when it was released). Throws LeaseHeld when
 * another worker holds it; undefined when the job is in neither state (ended, canceled, gone).
 */
export async function leaseJob<T extends Job<S>, S extends string>(store: JobStore<T, S>, job: T, terms: LeaseTerms<T, S>): Promise<JobLease<T, S> | undefined> {
  const { get, update } = store;
  const owner = randomUUID();
  const held = () => ({ owner, mode: 'held' as const, now: Date.now() });
  const renewed = () => ({ lease_owner: owner, lease_until: Date.now() + terms.leaseMs }) as Partial<T>;
  const { account_id: accountId, id } = job;
  const lost = async (): Promise<S | undefined> => {
    const now = await get(accountId, id);
    if (now?.status === terms.running) throw new LeaseHeld(`${id} is being worked on by another worker`);
    return now?.status;
  };
  let taken: T | undefined;
  if (terms.from !== undefined && job.status === terms.from) {
    taken = await update(accountId, id, { ...terms.started, ...terms.set, ...renewed(), status: terms.running } as Partial<T>, { statusIn: [terms.from] }, terms.add);
  } else if (job.status === terms.running) {
    taken = await update(accountId, id, { ...terms.set, ...renewed() }, { statusIn: [terms.running], lease: { owner, mode: 'take', now: Date.now() } }, terms.add);
  } else return undefined;
  if (!taken) {
    await lost();
    return undefined;
  }
  let current: T = taken;
  const write = async (set: Partial<T>, cond: LeasedCondition<S> = {}, add?: Record<string, number>) => {
    const out = await update(accountId, id, set, { statusIn: cond.statusIn ?? [terms.running], position: cond.position, lease: held() }, add);
    if (out) current = out;
    return out;
  };
  return {
    get job() {
      return current;
    },
    save: (set, cond, add) => write({ ...set, lease_until: Date.now() + terms.leaseMs }, cond, add),
    end: (set, cond) => write({ ...set, lease_until: 0 }, cond),
    release: async (statusIn) => {
      await write({ lease_until: 0 } as Partial<T>, { statusIn }).catch(() => undefined);
    },
    lost,
  };
}

/**
 * What local mode's recovery (shared/imports/recover.ts) needs of the family: its marked jobs,
 * each one's state (`queued`: not started; `processing`: `running`, it may hold a lease; else
 * ended), a running job's lease released, an ended job's marker cleared.
 */
export function recoverableJobs<T extends Job<S>, S extends string>(store: JobStore<T, S>, states: { queued?: S; running: S }) {
  const { get, update, listActive, clearActive, idAttr } = store;
  return {
    listActive: async () => (await listActive()).map((m) => ({ account_id: m.account_id, id: String((m as Record<string, unknown>)[idAttr]) })),
    get: async (accountId: string, id: string): Promise<{ status: 'queued' | 'processing' | 'ended' } | undefined> => {
      const job = await get(accountId, id);
      return job && { status: job.status === states.running ? 'processing' : job.status === states.queued ? 'queued' : 'ended' };
    },
    releaseLease: (accountId: string, id: string) => update(accountId, id, { lease_until: 0 } as Partial<T>, { statusIn: [states.running] }),
    clearActive,
  };
}
