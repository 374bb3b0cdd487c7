/**
 * Import jobs and their row errors (contract §10). One partition per job holds the job item
 * (sk `IMP`) and one item per row error (sk `E#<row number>`); GSI1 lists an account's jobs
 * newest first. Every state change is a conditional update on the job's status, so a canceled
 * job stops its worker at the next chunk and two deliveries of one queue message cannot both
 * save the same chunk.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { putItems } from './batch.js';
import { isConditionFailure, queryPartition } from './items.js';
import { keys, TABLE_DEFINITION } from './table.js';

export type ImportStatus = 'awaiting_upload' | 'queued' | 'processing' | 'completed' | 'failed' | 'canceled';

export interface ImportItem {
  id: string;
  account_id: string;
  created_by: string;
  object_type: 'contacts' | 'companies';
  mode: 'upsert' | 'create';
  file_name: string;
  status: ImportStatus;
  total_rows: number | null;
  processed_rows: number;
  created_count: number;
  updated_count: number;
  error_count: number;
  failure_reason: string;
  unmapped_columns: string[];
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  /** Where the file is (the imports bucket). */
  object_key: string;
  /** CSV records consumed by finished chunks (blank lines included): where a resumed worker starts. */
  position: number;
  /** Creation time of the records the next chunk creates (saved with the previous chunk: the same on a re-apply). */
  chunk_time?: string;
  /** The worker working on the job and until when (epoch ms): one worker at a time; a dead one's lease runs out. */
  lease_owner?: string;
  lease_until?: number;
}

export interface RowErrorItem {
  row_number: number;
  column: string;
  code: string;
  message: string;
  value: string;
  created_at: string;
}

export async function insertImport(item: ImportItem): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.importJob(item.account_id, item.id), ...keys.importGsi(item.account_id, item.created_at, item.id), ...item },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

const strip = (item: Record<string, unknown> | undefined): ImportItem | undefined => {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
  return rest as unknown as ImportItem;
};

export async function getImportItem(accountId: string, id: string): Promise<ImportItem | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.importJob(accountId, id), ConsistentRead: true }));
  return strip(out.Item);
}

/** One page of the account's jobs, newest first, after `after` (a `created_at#id` position). */
export async function queryImports(accountId: string, limit: number, after?: string): Promise<ImportItem[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: TABLE_DEFINITION.gsi1.name,
      KeyConditionExpression: after ? 'gsi1pk = :p AND gsi1sk < :a' : 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': keys.importListPartition(accountId), ...(after ? { ':a': after } : {}) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => strip(i)!);
}

export interface ImportCondition {
  /** The job's status must be one of these. */
  statusIn: readonly ImportStatus[];
  /** The job's saved position must be this (a chunk's progress is saved once). */
  position?: number;
  /** The worker must hold the job's lease (`held`), or may take it (`take`: free, run out at `now`, or its own). */
  lease?: { owner: string; mode: 'held' | 'take'; now: number };
}

/**
 * Sets fields of a job when `cond` holds; returns the job as written, or undefined when the
 * job is missing or the condition failed.
 */
export async function updateImportItem(accountId: string, id: string, set: Partial<ImportItem>, cond: ImportCondition): Promise<ImportItem | undefined> {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = {};
  const sets = Object.entries(set).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:f${i}`] = v;
    return `#f${i} = :f${i}`;
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
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.importJob(accountId, id),
        UpdateExpression: `SET ${sets.join(', ')}`,
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

/** Writes row errors (one item per row: writing a row's error again overwrites it). */
export async function putRowErrors(accountId: string, importId: string, errors: RowErrorItem[]): Promise<void> {
  await putItems(errors.map((e) => ({ ...keys.importError(accountId, importId, e.row_number), ...e })));
}

/** Sort key of the row error of `rowNumber` (the position of the errors' pagination). */
export const rowErrorPosition = (accountId: string, importId: string, rowNumber: number) => keys.importError(accountId, importId, rowNumber).sk;

/** One page of a job's row errors in row order, after `after` (a row error's sort key). */
export async function queryRowErrors(accountId: string, importId: string, limit: number, after?: string): Promise<RowErrorItem[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: after ? 'pk = :p AND sk > :a' : 'pk = :p AND begins_with(sk, :e)',
      ExpressionAttributeValues: { ':p': keys.importPartition(accountId, importId), ...(after ? { ':a': after } : { ':e': keys.importErrorPrefix }) },
      ProjectionExpression: 'row_number, #c, code, message, #v, created_at, sk',
      ExpressionAttributeNames: { '#c': 'column', '#v': 'value' },
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  // `sk > after` may reach the job item (`IMP` sorts after `E#…`): keep row errors only.
  return (out.Items ?? [])
    .filter((i) => String(i.sk).startsWith(keys.importErrorPrefix))
    .map(({ sk: _sk, ...e }) => e as RowErrorItem);
}

/** Marks a queued job (see `keys.activeImport`). */
export async function markImportActive(accountId: string, id: string): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.activeImport(accountId, id), account_id: accountId, import_id: id } }));
}

/** Every job marked active (a handful: markers are cleared once their job has ended). */
export async function listActiveImports(): Promise<{ account_id: string; import_id: string }[]> {
  return queryPartition<{ account_id: string; import_id: string }>(keys.activeImportsPartition);
}

export async function clearActiveImport(accountId: string, id: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.activeImport(accountId, id) }));
}
