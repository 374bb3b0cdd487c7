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
import { afterCursor, and, type Condition, cond, eq, type Expr, exists, is, itemOf, notExists, or, type TransactItem, transact, update, type UpdateExpr } from './expr.js';
import { queryAll, queryPartition } from './items.js';
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
  /**
   * Stages whose projects were moved (`move_to`): by the stage's id, where they go, the stage's
   * last name and kind, and the job that moves them. Kept (a few entries per removal): a project
   * still in such a stage, or restored from the trash into one, goes where it leads.
   */
  moves?: Record<string, StageMoved>;
  /**
   * The pipeline's use item holds its stage ids (every pipeline written since it does): a project
   * entering a stage checks the stage there, in its use count's update (no check of its own).
   */
  use_stages?: true;
}

/** A stage removed (or changed in kind) whose projects moved to `to`. */
export interface StageMoved {
  to: string;
  name: string;
  kind: 'open' | 'won' | 'lost';
  job_id: string;
}

/**
 * Where a project of `stageId` belongs now: that stage while the pipeline has it, else the stage
 * its projects were moved to (followed through later moves); undefined when none is known.
 */
export function resolveStage(pipeline: PipelineItem, stageId: string): PipelineItem['stages'][number] | undefined {
  let id = stageId;
  for (let hops = 0; hops <= 64; hops++) {
    const stage = pipeline.stages.find((s) => s.id === id);
    if (stage) return stage;
    const next = pipeline.moves?.[id]?.to;
    if (!next) return undefined;
    id = next;
  }
  return undefined;
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
/** A pipeline item's string set of its stage ids: a project's write checks its stage is still there. */
const STAGE_IDS = 'stage_ids';
/** The stored item of a pipeline: its fields and its stage ids' set. */
const stored = (item: PipelineItem) => ({ ...item, [STAGE_IDS]: new Set(item.stages.map((s) => s.id)), use_stages: true });
/** The use item's stage ids, set in the same transaction as the pipeline's stages (`use_stages`). */
const useStages = (item: PipelineItem): [string, unknown][] => [[STAGE_IDS, new Set(item.stages.map((s) => s.id))]];

/** Transaction items of expressions. */
const txUpdate = (Key: Record<string, string>, e: UpdateExpr): TransactItem => ({ Update: { TableName: tableName(), Key, ...e } });
const txDelete = (Key: Record<string, string>, e: Expr): TransactItem => ({ Delete: { TableName: tableName(), Key, ...e } });
const txCheck = (Key: Record<string, string>, c: Condition): TransactItem => ({ ConditionCheck: { TableName: tableName(), Key, ...c } });

const get = async (key: { pk: string; sk: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

export async function listPipelineItems(accountId: string): Promise<PipelineItem[]> {
  return (await queryPartition(keys.pipelinePartition(accountId))).map((raw) => itemOf<PipelineItem>(raw, [STAGE_IDS]));
}

export const getPipelineItem = async (accountId: string, id: string): Promise<PipelineItem | undefined> => itemOf<PipelineItem>(await get(keys.pipeline(accountId, id)), [STAGE_IDS]);

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
    { Put: { TableName: tableName(), Item: { ...keys.pipeline(accountId, item.id), ...stored(item) }, ...notExists() } },
    txUpdate(keys.pipelineHead(accountId), update({ set: item.is_default ? { default_id: item.id } : {}, add: { count: 1 } }, headIs(head), or(notExists('count'), is('count', '<', max)))),
    txUpdate(keys.pipelineUse(accountId, item.id), update({ set: useStages(item) })),
  ];
  const labels: PipelineRefusal[] = ['pipeline', 'head', 'use'];
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
  opts: { previous?: { id: string; version: number }; emptyStages?: readonly string[]; also?: readonly TransactItem[] } = {},
): Promise<PipelineRefusal | undefined> {
  const items: TransactItem[] = [{ Put: { TableName: tableName(), Item: { ...keys.pipeline(accountId, item.id), ...stored(item) }, ...eq('version', version) } }];
  const labels: PipelineRefusal[] = ['pipeline'];
  if (opts.previous) {
    items.push(demote(accountId, opts.previous, item.updated_at), txUpdate(keys.pipelineHead(accountId), update({ set: { default_id: item.id } }, eq('default_id', opts.previous.id))));
    labels.push('previous', 'head');
  }
  // The use item's stage ids follow the stages, on condition that the stages left out hold no project.
  const empty = opts.emptyStages?.length ? [or(notExists(), and(...opts.emptyStages.map((s) => or(notExists(`${STAGE_COUNT_PREFIX}${s}`), eq(`${STAGE_COUNT_PREFIX}${s}`, 0)))))] : [];
  items.push(txUpdate(keys.pipelineUse(accountId, item.id), update({ set: useStages(item) }, ...empty)));
  labels.push('use');
  items.push(...(opts.also ?? []));
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
    txDelete(keys.pipelineUse(accountId, item.id), or(notExists('n'), eq('n', 0))),
  ];
  return (await transact(items, ['pipeline', 'head', 'use']))?.which as PipelineRefusal | undefined;
}

// ---- projects in a pipeline ----------------------------------------------------------------------

/** Where a project is: a stage of a pipeline. */
export interface StagePlace {
  pipelineId: string;
  stageId: string;
}

/**
 * The items of a project's move from one place to another (either may be absent: entering or
 * leaving a pipeline), for the project's own transaction: the pipelines' use counts (`n` when
 * the pipeline changes, `s_<stage>` always), and the check that the pipeline entered still has the
 * stage (a concurrent pipelines-update that removed it refuses the write): the condition of its
 * use count's update when its use item holds the stage ids (`toPipeline.use_stages`), else a check
 * of the pipeline item.
 */
export function stageMoveItems(accountId: string, from: StagePlace | undefined, to: StagePlace | undefined, toPipeline?: Pick<PipelineItem, 'use_stages'>): TransactItem[] {
  const adds = new Map<string, Map<string, number>>();
  const add = (pipelineId: string, attr: string, by: number) => {
    const m = adds.get(pipelineId) ?? new Map<string, number>();
    m.set(attr, (m.get(attr) ?? 0) + by);
    adds.set(pipelineId, m);
  };
  if (from) add(from.pipelineId, `${STAGE_COUNT_PREFIX}${from.stageId}`, -1);
  if (to) add(to.pipelineId, `${STAGE_COUNT_PREFIX}${to.stageId}`, 1);
  if (from?.pipelineId !== to?.pipelineId) {
    if (from) add(from.pipelineId, 'n', -1);
    if (to) add(to.pipelineId, 'n', 1);
  }
  // expr.ts has no builder of contains(): the one function condition, with its placeholders as cond names them.
  const hasStage = to && cond('contains(#stage_ids, :stage)', { ':stage': to.stageId }, { '#stage_ids': STAGE_IDS });
  let checked = false;
  const items: TransactItem[] = [];
  for (const [pipelineId, m] of adds) {
    const changes = [...m].filter(([, by]) => by !== 0);
    if (!changes.length) continue;
    const here = pipelineId === to?.pipelineId && toPipeline?.use_stages === true;
    items.push(txUpdate(keys.pipelineUse(accountId, pipelineId), here ? update({ add: changes }, hasStage!) : update({ add: changes })));
    checked ||= here;
  }
  if (to && !checked) items.push(txCheck(keys.pipeline(accountId, to.pipelineId), hasStage!));
  return items;
}

/** One stay of a project in a stage (its history, contract §19). */
export interface StageVisit {
  seq: number;
  stage_id: string;
  stage_name: string;
  pipeline_id: string;
  entered_at: string;
  exited_at: string | null;
  duration_ms: number | null;
  actor: unknown;
}

/** How a visit ended: when, and how long it lasted. */
export interface VisitEnd {
  exited_at: string;
  duration_ms: number;
}

/**
 * The end of the visit before it, held by the visit a move begins (`ends`): a move writes one
 * history item, not two (the visit it ends is not written again; readers take its end from here).
 */
const PREVIOUS_END = 'ends';

/**
 * The visit a write begins (put only if absent: a replayed write does not overwrite it); `ends`:
 * the end of the visit before it, when the same write ends that one (a move).
 */
export const openVisitItem = (accountId: string, projectId: string, visit: StageVisit, ends?: VisitEnd): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...keys.stageVisit(accountId, projectId, visit.seq), ...visit, ...(ends ? { [PREVIOUS_END]: ends } : {}) }, ...notExists() },
});

/** The visit a move ends: its exit time and duration. */
export const closeVisitItem = (accountId: string, projectId: string, seq: number, exitedAt: string, durationMs: number): TransactItem =>
  txUpdate(keys.stageVisit(accountId, projectId, seq), update({ set: { exited_at: exitedAt, duration_ms: durationMs } }, exists()));

/**
 * A page of a project's visits, oldest first, after visit `after` (0: from the first), each with
 * its end: its own, or held by the next visit (a move's). The last one's end, when a move wrote it,
 * is in the visit after the page: a caller that needs it reads one more (as a page's `limit + 1`).
 */
export async function stageVisitsAfter(accountId: string, projectId: string, after: number, limit: number): Promise<StageVisit[]> {
  const out: (StageVisit & { [PREVIOUS_END]?: VisitEnd })[] = [];
  for await (const raw of queryAll({ ...afterCursor(keys.stageVisitPartition(accountId, projectId), keys.stageVisit(accountId, projectId, after).sk, { forward: true }), Limit: limit })) {
    out.push(itemOf<StageVisit>(raw));
    if (out.length >= limit) break;
  }
  return out.map(({ [PREVIOUS_END]: _, ...visit }, i) => {
    const ends = out[i + 1]?.[PREVIOUS_END];
    return visit.exited_at === null && ends ? { ...visit, exited_at: ends.exited_at, duration_ms: ends.duration_ms } : visit;
  });
}

// ---- trashed projects (counted in `n` until purged) ------------------------------------------------

/**
 * A trashed project of a pipeline, beside its use item (`T#<project id>`, `purge_at`): put in the
 * deletion's transaction, removed in the restore's (on condition it is still there), or when the
 * trash is past its purge time by `settlePurged`, which takes it out of `n` in the same transaction.
 * Its key is the use item's partition with its own sort key, not a declaration of its own in
 * shared/schemas/keys (every bundle carries those, and the largest have no bytes to spare); like
 * the use item it holds nothing personal.
 */
const trashedKey = (accountId: string, pipelineId: string, projectId: string) => ({ pk: keys.pipelineUse(accountId, pipelineId).pk, sk: `T#${projectId}` });

export const trashedPut = (accountId: string, place: StagePlace, projectId: string, purgeAt: string): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...trashedKey(accountId, place.pipelineId, projectId), purge_at: purgeAt, stage_id: place.stageId } },
});

export const trashedDelete = (accountId: string, pipelineId: string, projectId: string): TransactItem => txDelete(trashedKey(accountId, pipelineId, projectId), exists());

/**
 * The pipeline's trashed projects past their purge time (the trash's TTL may lag, and DynamoDB
 * Local has none: readers treat them as gone) leave its use count, each in one transaction with
 * its entry's removal (on condition it is still there: a restore or another settle took it), and
 * its stage's count (`stage_id` of the entry).
 */
export async function settlePurged(accountId: string, pipelineId: string, now = new Date().toISOString()): Promise<number> {
  let settled = 0;
  const pk = keys.pipelineUse(accountId, pipelineId).pk;
  for await (const raw of queryAll({ TableName: tableName(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)', ExpressionAttributeValues: { ':pk': pk, ':t': 'T#' } })) {
    if (typeof raw.purge_at !== 'string' || raw.purge_at > now) continue;
    const add: [string, number][] = [['n', -1], ...(typeof raw.stage_id === 'string' ? [[`${STAGE_COUNT_PREFIX}${raw.stage_id}`, -1] as [string, number]] : [])];
    const done = await transact([txDelete({ pk, sk: String(raw.sk) }, exists()), txUpdate(keys.pipelineUse(accountId, pipelineId), update({ add }))], ['entry', 'use']);
    if (!done) settled++;
  }
  return settled;
}
