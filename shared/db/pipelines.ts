/**
 * Pipelines in the table (contract §19): every DynamoDB call of the family.
 *
 * - Pipeline: `A#<acct>#pl / <id>`: the API fields (`stages` as a list of maps), `version`.
 * - Head: `A#<acct>#plh / H`: `count` (pipelines, at most `max`), `default_id`. Every create,
 *   delete and move of the default changes it in the same transaction as the pipelines, on
 *   condition of what was read, so the limit and "exactly one default" hold under races.
 * - Use: `A#<acct>#pl#<id> / U`: `n` projects in the pipeline (trashed ones included) and
 *   `s_<stage id>` per stage, kept by the projects' writes; a delete requires `n` = 0.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.js';
import { and, cond, eq, type Expr, exists, is, itemOf, notExists, or, type TransactItem, transact, update } from './expr.js';
import { queryPartition } from './items.js';
import { keys } from './table.js';

/** A pipeline as stored (its keys left out). */
export interface PipelineItem {
  id: string;
  account_id: string;
  name: string;
  is_default: boolean;
  stages: { id: string; name: string; kind: 'open' | 'won' | 'lost'; probability: number; rot_days: number | null }[];
  version: number;
  created_at: string;
  updated_at: string;
}

export interface PipelineHead {
  count: number;
  default_id?: string;
}

/** What a pipeline's projects are (the use item): `n` in all, `stages` by stage id. */
export interface PipelineUse {
  n: number;
  stages: Record<string, number>;
}

const STAGE_COUNT_PREFIX = 's_';

/** Transaction items of expressions (the builders leave each clause optional). */
const txUpdate = (Key: Record<string, string>, e: Expr): TransactItem => ({ Update: { TableName: tableName(), Key, ...e, UpdateExpression: e.UpdateExpression! } });
const txDelete = (Key: Record<string, string>, e: Expr): TransactItem => ({ Delete: { TableName: tableName(), Key, ...e } });

const get = async (key: { pk: string; sk: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

export async function listPipelineItems(accountId: string): Promise<PipelineItem[]> {
  return (await queryPartition(keys.pipelinePartition(accountId))).map((raw) => itemOf<PipelineItem>(raw));
}

export const getPipelineItem = async (accountId: string, id: string): Promise<PipelineItem | undefined> => itemOf<PipelineItem>(await get(keys.pipeline(accountId, id)));

export async function getPipelineHead(accountId: string): Promise<PipelineHead> {
  const raw = await get(keys.pipelineHead(accountId));
  return { count: Number(raw?.count ?? 0), ...(typeof raw?.default_id === 'string' ? { default_id: raw.default_id } : {}) };
}

export async function getPipelineUse(accountId: string, id: string): Promise<PipelineUse> {
  const raw = await get(keys.pipelineUse(accountId, id));
  const stages: Record<string, number> = {};
  for (const [k, v] of Object.entries(raw ?? {})) if (k.startsWith(STAGE_COUNT_PREFIX) && Number(v) > 0) stages[k.slice(STAGE_COUNT_PREFIX.length)] = Number(v);
  return { n: Number(raw?.n ?? 0), stages };
}

/** The head is as read: its count and its default. */
const headIs = (head: PipelineHead): Expr =>
  and(head.count === 0 ? or(notExists('count'), eq('count', 0)) : eq('count', head.count), head.default_id ? eq('default_id', head.default_id) : notExists('default_id'));

/** The previous default loses it (`is_default` false, its version + 1), on condition it is still the default at `version`. */
function demote(accountId: string, previous: { id: string; version: number }, now: string): TransactItem {
  return txUpdate(keys.pipeline(accountId, previous.id), update({ set: { is_default: false, version: previous.version + 1, updated_at: now } }, eq('version', previous.version), eq('is_default', true)));
}

/** Why a pipeline write was refused: the pipeline changed (`pipeline`), the head moved (`head`: count or default), the previous default changed (`previous`), projects are in it (`use`). */
export type PipelineRefusal = 'pipeline' | 'head' | 'previous' | 'use';

/**
 * Creates a pipeline: its item, the head's count + 1 (and `default_id` when it becomes the
 * default), the previous default demoted; on condition that the head is as read (`head`) and
 * its count below `max`. Undefined when written, else what refused it.
 */
export async function putPipeline(accountId: string, item: PipelineItem, head: PipelineHead, max: number, previous?: { id: string; version: number }): Promise<PipelineRefusal | undefined> {
  const items: TransactItem[] = [
    { Put: { TableName: tableName(), Item: { ...keys.pipeline(accountId, item.id), ...item }, ...notExists() } },
    txUpdate(keys.pipelineHead(accountId), update({ set: item.is_default ? { default_id: item.id } : {}, add: { count: 1 } }, headIs(head), cond('attribute_not_exists(#count) OR #count < :max', { ':max': max }, { '#count': 'count' }))),
  ];
  const labels: PipelineRefusal[] = ['pipeline', 'head'];
  if (previous) {
    items.push(demote(accountId, previous, item.created_at));
    labels.push('previous');
  }
  return (await transact(items, labels))?.which as PipelineRefusal | undefined;
}

/**
 * Writes a changed pipeline on condition it is still at `version` (the new item holds version + 1);
 * when it becomes the default, the previous one is demoted and the head's `default_id` moved in
 * the same transaction. `emptyStages`: stages that must hold no project (left out, or of another kind).
 */
export async function replacePipeline(
  accountId: string,
  item: PipelineItem,
  version: number,
  opts: { previous?: { id: string; version: number }; emptyStages?: readonly string[] } = {},
): Promise<PipelineRefusal | undefined> {
  const items: TransactItem[] = [{ Put: { TableName: tableName(), Item: { ...keys.pipeline(accountId, item.id), ...item }, ...eq('version', version) } }];
  const labels: PipelineRefusal[] = ['pipeline'];
  if (opts.previous) {
    items.push(demote(accountId, opts.previous, item.updated_at), txUpdate(keys.pipelineHead(accountId), update({ set: { default_id: item.id } }, eq('default_id', opts.previous.id))));
    labels.push('previous', 'head');
  }
  if (opts.emptyStages?.length) {
    const empty = or(notExists(), and(...opts.emptyStages.map((s) => or(notExists(`${STAGE_COUNT_PREFIX}${s}`), eq(`${STAGE_COUNT_PREFIX}${s}`, 0)))));
    items.push({ ConditionCheck: { TableName: tableName(), Key: keys.pipelineUse(accountId, item.id), ...empty, ConditionExpression: empty.ConditionExpression! } });
    labels.push('use');
  }
  return (await transact(items, labels))?.which as PipelineRefusal | undefined;
}

/**
 * Deletes a pipeline at `version` holding no project (its use item, deleted with it, absent or at `n` = 0); the head's
 * count − 1 (and `default_id` removed when it was the default: then only as the last one).
 */
export async function deletePipeline(accountId: string, item: Pick<PipelineItem, 'id' | 'version' | 'is_default'>): Promise<PipelineRefusal | undefined> {
  const items: TransactItem[] = [
    txDelete(keys.pipeline(accountId, item.id), and(exists(), eq('version', item.version))),
    txUpdate(
      keys.pipelineHead(accountId),
      item.is_default ? update({ add: { count: -1 }, remove: ['default_id'] }, eq('default_id', item.id), eq('count', 1)) : update({ add: { count: -1 } }, is('default_id', '<>', item.id)),
    ),
    txDelete(keys.pipelineUse(accountId, item.id), or(notExists(), eq('n', 0))),
  ];
  return (await transact(items, ['pipeline', 'head', 'use']))?.which as PipelineRefusal | undefined;
}
