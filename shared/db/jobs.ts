/**
 * Asynchronous jobs (imports §10, exports §16, erasures §18, index builds §17): one item per job,
 * listed newest first on GSI1, changed only by conditional updates (on its status, a saved
 * position, a worker's lease), and a marker per queued job that a restarted local mode finds. One
 * store per job family, from its keys; its workers hold a job through its lease (job-lease.ts).
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { and, eq, exists, is, itemOf, notExists, oneOf, or, type TransactItem, update as updateOf } from './expr.js';
import { isConditionFailure, queryNewestFirst, queryPartition } from './items.js';

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

export interface Job<S extends string> {
  id: string;
  account_id: string;
  created_at: string;
  status: S;
  lease_owner?: string;
  lease_until?: number;
}

export function jobStore<T extends Job<S>, A extends string, S extends string = T['status']>(k: JobKeys & { activeIdAttr: A }) {
  type Marker = { account_id: string } & Record<A, string>;
  const strip = (item: Record<string, unknown> | undefined) => itemOf<T>(item);

  async function insert(item: T): Promise<void> {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...k.job(item.account_id, item.id), ...k.gsi(item.account_id, item.created_at, item.id), ...item },
        ...notExists(),
      }),
    );
  }

  /** The items of `insert` and `markActive` for another write's transaction (the job starts with the change that asks for it). */
  const insertItems = (item: T): TransactItem[] => [
    { Put: { TableName: tableName(), Item: { ...k.job(item.account_id, item.id), ...k.gsi(item.account_id, item.created_at, item.id), ...item }, ...notExists() } },
    { Put: { TableName: tableName(), Item: { ...k.active(item.account_id, item.id), account_id: item.account_id, [k.activeIdAttr]: item.id } } },
  ];

  async function get(accountId: string, id: string): Promise<T | undefined> {
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: k.job(accountId, id), ConsistentRead: true }));
    return strip(out.Item);
  }

  /** One page of the account's jobs, newest first, after `after` (a `created_at#id` position). */
  async function query(accountId: string, limit: number, after?: string): Promise<T[]> {
    return (await queryNewestFirst(k.listPartition(accountId), limit, after)).map((i) => itemOf<T>(i));
  }

  /**
   * Sets fields of a job (and adds `add` to counters) when `cond` holds; returns the job as
   * written, or undefined when the job is missing or the condition failed.
   */
  async function update(accountId: string, id: string, set: Partial<T>, cond: JobCondition<S>, add: Record<string, number> = {}): Promise<T | undefined> {
    const lease = cond.lease;
    const condition = and(
      exists(),
      oneOf('status', cond.statusIn),
      cond.position !== undefined && eq('position', cond.position),
      lease && (lease.mode === 'held' ? eq('lease_owner', lease.owner) : or(notExists('lease_until'), is('lease_until', '<', lease.now), eq('lease_owner', lease.owner))),
    );
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: k.job(accountId, id),
          ...updateOf({ set, add }, condition),
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

  return { insert, insertItems, get, query, update, markActive, listActive, clearActive, idAttr: k.activeIdAttr };
}
