/**
 * Asynchronous jobs (imports §10, exports §16, erasures §18, index builds §17): one item per job,
 * listed newest first on GSI1, changed only by conditional updates (on its status, a saved
 * position, a worker's lease), and a marker per queued job that a restarted local mode finds. One
 * store per job family, from its keys; its workers hold a job through the store's `lease`.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { isConditionFailure, queryPartition } from './items.js';
import { TABLE_DEFINITION } from './table.js';

type Key = { pk: string; sk: string };

/** Where a family's jobs live (from `keys` in table.ts). */
export interface JobKeys {
  job: (accountId: string, id: string) => Key;
  gsi: (accountId: string, createdAt: string, id: string) => { gsi1pk: string; gsi1sk: string };
  listPartition: (accountId: string) => string;
  active: (accountId: string, id: string) => Key;
  activePartition: string;
  /** The job id's attribute on an active marker (`import_id`, `export_id`). */
  activeIdAttr: string;
}

export interface JobCondition<S extends string> {
  /** The job's status must be one of these. */
  statusIn: readonly S[];
  /** The job's saved position must be this (a chunk's progress is saved once). */
  position?: number;
  /** The worker must hold the job's lease (`held`), or may take it (`take`: free, run out at `now`, or its own). */
  lease?: { owner: string; mode: 'held' | 'take'; now: number };
}

interface Job<S extends string> {
  id: string;
  account_id: string;
  created_at: string;
  status: S;
  lease_owner?: string;
  lease_until?: number;
}

/** Another worker holds the job's lease: the message must come back later, in case that worker dies. */
export class LeaseHeld extends Error {}

/** Which saved state a leased write expects (default: the running status, any position). */
export interface LeasedCondition<S extends string> {
  statusIn?: readonly S[];
  position?: number;
}

/**
 * A job held by one worker (`jobStore(...).lease`): every write is conditional on the lease, and
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

/** How a worker takes a job (`jobStore(...).lease`). */
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

export function jobStore<T extends Job<S>, A extends string, S extends string = T['status']>(k: JobKeys & { activeIdAttr: A }) {
  type Marker = { account_id: string } & Record<A, string>;
  const strip = (item: Record<string, unknown> | undefined): T | undefined => {
    if (!item) return undefined;
    const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
    return rest as unknown as T;
  };

  async function insert(item: T): Promise<void> {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...k.job(item.account_id, item.id), ...k.gsi(item.account_id, item.created_at, item.id), ...item },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async function get(accountId: string, id: string): Promise<T | undefined> {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: k.job(accountId, id), ConsistentRead: true }));
    return strip(out.Item);
  }

  /** One page of the account's jobs, newest first, after `after` (a `created_at#id` position). */
  async function query(accountId: string, limit: number, after?: string): Promise<T[]> {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: TABLE_DEFINITION.gsi1.name,
        KeyConditionExpression: after ? 'gsi1pk = :p AND gsi1sk < :a' : 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': k.listPartition(accountId), ...(after ? { ':a': after } : {}) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => strip(i)!);
  }

  /**
   * Sets fields of a job (and adds `add` to counters) when `cond` holds; returns the job as
   * written, or undefined when the job is missing or the condition failed.
   */
  async function update(accountId: string, id: string, set: Partial<T>, cond: JobCondition<S>, add: Record<string, number> = {}): Promise<T | undefined> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {};
    const sets = Object.entries(set).map(([f, v], i) => {
      names[`#f${i}`] = f;
      values[`:f${i}`] = v;
      return `#f${i} = :f${i}`;
    });
    const adds = Object.entries(add).map(([f, v], i) => {
      names[`#a${i}`] = f;
      values[`:a${i}`] = v;
      return `#a${i} :a${i}`;
    });
    const statuses = cond.statusIn.map((s, i) => {
      values[`:s${i}`] = s;
      return `:s${i}`;
    });
    let condition = `attribute_exists(pk) AND #status IN (${statuses.join(', ')})`;
    if (cond.position !== undefined) {
      names['#pos'] = 'position';
      values[':pos'] = cond.position;
      condition += ' AND #pos = :pos';
    }
    if (cond.lease) {
      names['#lo'] = 'lease_owner';
      values[':owner'] = cond.lease.owner;
      if (cond.lease.mode === 'held') condition += ' AND #lo = :owner';
      else {
        names['#lu'] = 'lease_until';
        values[':now'] = cond.lease.now;
        condition += ' AND (attribute_not_exists(#lu) OR #lu < :now OR #lo = :owner)';
      }
    }
    const expression = [sets.length ? `SET ${sets.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : ''].filter(Boolean).join(' ');
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: k.job(accountId, id),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return strip(out.Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /** Marks a queued job: a restarted local mode finds it (its queue lived in memory). */
  async function markActive(accountId: string, id: string): Promise<void> {
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...k.active(accountId, id), account_id: accountId, [k.activeIdAttr]: id } }));
  }

  /** Every job marked active (a handful: markers are cleared once their job has ended). */
  async function listActive(): Promise<Marker[]> {
    return queryPartition<Marker>(k.activePartition);
  }

  async function clearActive(accountId: string, id: string): Promise<void> {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: k.active(accountId, id) }));
  }

  /**
   * Takes the job for one worker: a job in `from` starts (becomes `running`); a `running` one is
   * taken over once its lease ran out (or at once when it was released). Throws LeaseHeld when
   * another worker holds it; undefined when the job is in neither state (ended, canceled, gone).
   */
  async function lease(job: T, terms: LeaseTerms<T, S>): Promise<JobLease<T, S> | undefined> {
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
  function recoverable(states: { queued?: S; running: S }) {
    return {
      listActive: async () => (await listActive()).map((m) => ({ account_id: m.account_id, id: m[k.activeIdAttr] })),
      get: async (accountId: string, id: string): Promise<{ status: 'queued' | 'processing' | 'ended' } | undefined> => {
        const job = await get(accountId, id);
        return job && { status: job.status === states.running ? 'processing' : job.status === states.queued ? 'queued' : 'ended' };
      },
      releaseLease: (accountId: string, id: string) => update(accountId, id, { lease_until: 0 } as Partial<T>, { statusIn: [states.running] }),
      clearActive,
    };
  }

  return { insert, get, query, update, lease, markActive, listActive, clearActive, recoverable };
}
