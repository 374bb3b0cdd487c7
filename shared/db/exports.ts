/**
 * Export jobs (contract §16). One item per job (sk `EXP`); GSI1 lists an account's jobs newest
 * first. Every state change is a conditional update on the job's status (and, for a worker, on
 * the lease it holds), so two deliveries of one queue message cannot both write the file, and a
 * worker that lost its lease cannot mark the job completed.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { isConditionFailure, queryPartition } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

export type ExportStatus = 'queued' | 'processing' | 'completed' | 'failed';
export type ExportObjectType = 'contacts' | 'companies' | 'projects' | 'activities';

export interface ExportItem {
  id: string;
  account_id: string;
  created_by: string;
  object_type: ExportObjectType;
  /** The list filters, as validated (no cursor, no limit). */
  filters: Record<string, unknown>;
  status: ExportStatus;
  total_rows: number | null;
  processed_rows: number;
  failure_reason: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Where the file is written (the exports prefix of the bucket). */
  object_key: string;
  /** The multipart upload of the attempt in progress (aborted by the next attempt). */
  upload_id?: string;
  /** Attempts started (a restart after a crash starts the file again, at most MAX_EXPORT_ATTEMPTS times). */
  attempts: number;
  /** The worker working on the job and until when (epoch ms): one at a time; a dead one's lease runs out. */
  lease_owner?: string;
  lease_until?: number;
}

export async function insertExport(item: ExportItem): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.exportJob(item.account_id, item.id), ...keys.exportGsi(item.account_id, item.created_at, item.id), ...item },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

const strip = (item: Record<string, unknown> | undefined): ExportItem | undefined => {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
  return rest as unknown as ExportItem;
};

export async function getExportItem(accountId: string, id: string): Promise<ExportItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.exportJob(accountId, id), ConsistentRead: true }));
  return strip(out.Item);
}

/** One page of the account's export jobs, newest first, after `after` (a `created_at#id` position). */
export async function queryExports(accountId: string, limit: number, after?: string): Promise<ExportItem[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: TABLE_DEFINITION.gsi1.name,
      KeyConditionExpression: after ? 'gsi1pk = :p AND gsi1sk < :a' : 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': keys.exportListPartition(accountId), ...(after ? { ':a': after } : {}) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => strip(i)!);
}

export interface ExportCondition {
  /** The job's status must be one of these. */
  statusIn: readonly ExportStatus[];
  /** The worker must hold the job's lease (`held`), or may take it (`take`: free, run out at `now`, or its own). */
  lease?: { owner: string; mode: 'held' | 'take'; now: number };
}

/**
 * Sets fields of a job (and adds `add` to counters) when `cond` holds; returns the job as
 * written, or undefined when the job is missing or the condition failed.
 */
export async function updateExportItem(accountId: string, id: string, set: Partial<ExportItem>, cond: ExportCondition, add: Partial<Record<'attempts', number>> = {}): Promise<ExportItem | undefined> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = {};
  const sets = Object.entries(set).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:f${i}`] = v;
    return `#f${i} = :f${i}`;
  });
  const adds = Object.entries(add).map(([k, v], i) => {
    names[`#a${i}`] = k;
    values[`:a${i}`] = v;
    return `#a${i} :a${i}`;
  });
  const statuses = cond.statusIn.map((s, i) => {
    values[`:s${i}`] = s;
    return `:s${i}`;
  });
  let condition = `attribute_exists(pk) AND #status IN (${statuses.join(', ')})`;
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
        Key: keys.exportJob(accountId, id),
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

/** Marks a queued job (see `keys.activeExport`). */
export async function markExportActive(accountId: string, id: string): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.activeExport(accountId, id), account_id: accountId, export_id: id } }));
}

/** Every job marked active (a handful: markers are cleared once their job has ended). */
export async function listActiveExports(): Promise<{ account_id: string; export_id: string }[]> {
  return queryPartition<{ account_id: string; export_id: string }>(keys.activeExportsPartition);
}

export async function clearActiveExport(accountId: string, id: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.activeExport(accountId, id) }));
}
