/**
 * Pipelines (contract §19): the rules of create, get, list, update and delete over the data
 * layer's items (shared/db/pipelines.ts). The body's own rules (types, 3–30 stages, kinds, unique
 * names, defaults) are the parse's (shared/schemas/pipelines.ts); here: the account's limit and
 * default, stage identities, versions, and the projects a change would strand.
 */
import { randomUUID } from 'node:crypto';
import { untilAnswered } from '../backoff.js';
import { stageMoveItems as stageMoveJobItems, type StageMove } from '../db/index-builds.js';
import { deletePipeline as deletePipelineItem, getPipelineHead, getPipelineItem, getPipelineUse, listPipelineItems, type PipelineItem, putPipeline, replacePipeline, settlePurged, type StageMoved } from '../db/pipelines.js';
import { ApiError, type ErrorDetail, invalidRequest, notFound } from '../errors.js';
import { MAX_PIPELINES, type Pipeline, type PipelineCreate, type PipelineUpdate, pipelineSchema, type Stage } from '../schemas/pipelines.js';
import { apiShape } from '../schemas/resource.js';
import type { OperationContext } from './context.js';

const FAMILY = 'pipelines';
/** Attempts of a write that lost a race (another create, a move of the default) before `pipelines.conflict`. */
const ATTEMPTS = 12;

const toApi: (item: object) => Pipeline = apiShape(pipelineSchema);

const conflict = (message: string) => new ApiError(`${FAMILY}.conflict`, message);
const limitExceeded = () => new ApiError(`${FAMILY}.limit_exceeded`, `an account has at most ${MAX_PIPELINES} pipelines`, [{ path: 'name', message: 'limit reached' }]);

/** Runs `attempt` until it answers (undefined: it lost a race); `pipelines.conflict` past the bound. */
const retried = <T>(attempt: () => Promise<T | undefined>): Promise<T> => untilAnswered(attempt, ATTEMPTS, () => conflict('the pipelines changed concurrently; try again'));

async function current(ctx: OperationContext, id: string): Promise<PipelineItem> {
  const item = await getPipelineItem(ctx.accountId, id);
  if (!item) throw notFound(FAMILY, 'pipeline');
  return item;
}

export async function createPipeline(ctx: OperationContext, input: PipelineCreate): Promise<Pipeline> {
  return retried(async () => {
    const head = await getPipelineHead(ctx.accountId);
    if (head.count >= MAX_PIPELINES) throw limitExceeded();
    const isDefault = !head.default_id || input.is_default === true;
    const previous = isDefault && head.default_id ? await getPipelineItem(ctx.accountId, head.default_id) : undefined;
    const now = new Date().toISOString();
    const item: PipelineItem = {
      id: randomUUID(),
      account_id: ctx.accountId,
      name: input.name,
      is_default: isDefault,
      stages: input.stages.map((s) => ({ ...s, id: randomUUID() })),
      version: 1,
      created_at: now,
      updated_at: now,
    };
    const refused = await putPipeline(ctx.accountId, item, head, MAX_PIPELINES, previous && { id: previous.id, version: previous.version });
    return refused ? undefined : toApi(item);
  });
}

export const getPipeline = async (ctx: OperationContext, id: string): Promise<Pipeline> => toApi(await current(ctx, id));

/** The default first, then by `created_at` (and id). */
export async function listPipelines(ctx: OperationContext): Promise<{ items: Pipeline[] }> {
  const items = await listPipelineItems(ctx.accountId);
  items.sort((a, b) => Number(b.is_default) - Number(a.is_default) || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return { items: items.map(toApi) };
}

/**
 * The new stage list: a stage sent with an id must be one of the pipeline's (it keeps it), one
 * without gets a new id. Also which current stages leave (left out, or their kind changes).
 */
function nextStages(pipeline: PipelineItem, drafts: NonNullable<PipelineUpdate['stages']>): { stages: Stage[]; affected: Stage[] } {
  const byId = new Map(pipeline.stages.map((s) => [s.id, s]));
  const details: ErrorDetail[] = [];
  const stages = drafts.map((d, i): Stage => {
    if (d.id !== undefined && !byId.has(d.id)) details.push({ path: `stages.${i}.id`, message: 'is not a stage of this pipeline (leave id out for a new stage)' });
    return { ...d, id: d.id ?? randomUUID() };
  });
  if (details.length) throw invalidRequest(FAMILY, `stages.${details[0]!.path.split('.')[1]}.id is not a stage of this pipeline`, details);
  const kept = new Map(stages.map((s) => [s.id, s]));
  const affected = pipeline.stages.filter((s) => kept.get(s.id)?.kind !== s.kind);
  return { stages, affected };
}

/** `move_to`: each key a stage that leaves, each value a stage of the new list that stays. */
function checkMoveTo(moveTo: Record<string, string>, affected: readonly Stage[], stages: readonly Stage[]): void {
  const details: ErrorDetail[] = [];
  const leaving = new Set(affected.map((s) => s.id));
  const staying = new Set(stages.map((s) => s.id).filter((id) => !leaving.has(id)));
  for (const [from, to] of Object.entries(moveTo)) {
    if (!leaving.has(from)) details.push({ path: `move_to.${from}`, message: 'is not a stage this change removes or changes the kind of' });
    else if (!staying.has(to)) details.push({ path: `move_to.${from}`, message: 'must be the id of a stage of this pipeline that stays' });
  }
  if (details.length) throw invalidRequest(FAMILY, `move_to names ${details.length} stage(s) it cannot use`, details);
}

const sameStages = (a: readonly Stage[], b: readonly Stage[]) => JSON.stringify(a.map(stageKeyed)) === JSON.stringify(b.map(stageKeyed));
const stageKeyed = (s: Stage) => [s.id, s.name, s.kind, s.probability, s.rot_days];

/**
 * Changes a pipeline. A change with `move_to` queues, in its own transaction, the job that moves
 * the named stages' projects; `queueMove` sends its message once committed (the index-build
 * queue's: shared/indexing/storage.ts).
 */
export async function updatePipeline(ctx: OperationContext, input: PipelineUpdate, queueMove?: (message: { account_id: string; build_id: string }) => Promise<void>): Promise<Pipeline> {
  return retried(async () => {
    const pipeline = await current(ctx, input.id);
    if (input.expected_version !== undefined && input.expected_version !== pipeline.version) {
      throw conflict(`the pipeline is at version ${pipeline.version}, not ${input.expected_version}`);
    }
    if (input.is_default === false && pipeline.is_default) {
      throw invalidRequest(FAMILY, 'an account always has a default pipeline: make another one the default instead', [{ path: 'is_default', message: 'cannot be unset on the default pipeline' }]);
    }
    const planned = input.stages ? nextStages(pipeline, input.stages) : { stages: pipeline.stages, affected: [] };
    const moveTo = input.move_to ?? {};
    checkMoveTo(moveTo, planned.affected, planned.stages);
    // Stages left out (or changing kind) that hold projects, or that a move still sends projects
    // to (its removed stage not empty yet), need move_to; a job moves those projects
    // (shared/indexing/stage-moves.ts) while the pipeline's change commits at once.
    const moving = planned.affected.filter((s) => moveTo[s.id]);
    // Stages that stay with their kind but a new name, probability or rot_days: their projects show
    // the stage's name and probability (contract §19), written again by the same job.
    const before = new Map(pipeline.stages.map((s) => [s.id, s]));
    const restated = planned.stages.filter((s) => {
      const was = before.get(s.id);
      return was !== undefined && was.kind === s.kind && (was.name !== s.name || was.probability !== s.probability || was.rot_days !== s.rot_days);
    });
    // Every one of them, empty or not: a project placed while this change commits is reached too.
    const refresh = restated.map((s) => s.id);
    if (planned.affected.length) {
      const use = await getPipelineUse(ctx.accountId, pipeline.id);
      const present = new Set(pipeline.stages.map((s) => s.id));
      const inbound = (id: string) => Object.entries(pipeline.moves ?? {}).some(([from, m]) => m.to === id && !present.has(from) && (use.stages[from] ?? 0) > 0);
      const held = planned.affected.find((s) => ((use.stages[s.id] ?? 0) > 0 || inbound(s.id)) && !moveTo[s.id]);
      if (held) {
        const n = use.stages[held.id] ?? 0;
        const why = n > 0 ? `holds ${n} project${n === 1 ? '' : 's'}` : 'is where the projects of a removed stage are being moved';
        throw new ApiError(`${FAMILY}.stage_in_use`, `stage "${held.name}" (${held.id}) ${why}: name where they go in move_to`, [{ path: `move_to.${held.id}`, message: `is required: the stage ${why}` }]);
      }
    }
    const now = new Date().toISOString();
    const job: StageMove | undefined =
      moving.length || refresh.length
        ? { id: randomUUID(), account_id: ctx.accountId, created_at: now, status: 'processing', action: 'move', pipeline_id: pipeline.id, moves: Object.fromEntries(moving.map((s) => [s.id, moveTo[s.id]!])), ...(refresh.length ? { refresh } : {}), position: 0, done: 0 }
        : undefined;
    const moves = moving.length && job ? { ...pipeline.moves, ...Object.fromEntries(moving.map((s): [string, StageMoved] => [s.id, { to: moveTo[s.id]!, name: s.name, kind: s.kind, job_id: job.id }])) } : pipeline.moves;
    const makeDefault = input.is_default === true && !pipeline.is_default;
    const name = input.name ?? pipeline.name;
    if (!makeDefault && name === pipeline.name && sameStages(planned.stages, pipeline.stages)) return toApi(pipeline);
    const previousId = makeDefault ? (await getPipelineHead(ctx.accountId)).default_id : undefined;
    const previous = previousId && previousId !== pipeline.id ? await getPipelineItem(ctx.accountId, previousId) : undefined;
    const next: PipelineItem = { ...pipeline, name, stages: planned.stages, is_default: pipeline.is_default || makeDefault, version: pipeline.version + 1, updated_at: now, ...(moves ? { moves } : {}) };
    const refused = await replacePipeline(ctx.accountId, next, pipeline.version, {
      ...(previous ? { previous: { id: previous.id, version: previous.version } } : {}),
      emptyStages: planned.affected.filter((s) => !moveTo[s.id]).map((s) => s.id),
      also: job ? stageMoveJobItems(job) : [],
    });
    if (!refused) {
      if (job) await queueMove?.({ account_id: ctx.accountId, build_id: job.id });
      return toApi(next);
    }
    // Changed since it was read: with expected_version the caller's base is gone; else decide again.
    if (refused === 'pipeline' && input.expected_version !== undefined) throw conflict('the pipeline changed since expected_version');
    return undefined;
  });
}

export async function deletePipeline(ctx: OperationContext, id: string): Promise<{ deleted: true }> {
  return retried(async () => {
    const pipeline = await current(ctx, id);
    const refused = await deletePipelineItem(ctx.accountId, pipeline);
    if (!refused) return { deleted: true } as const;
    if (refused === 'use') {
      // Trashed projects past their purge time are gone (contract §15): they leave the count first.
      if ((await settlePurged(ctx.accountId, id)) > 0) return undefined;
      const { n } = await getPipelineUse(ctx.accountId, id);
      if (n === 0) return undefined; // its last project left meanwhile
      throw new ApiError(`${FAMILY}.in_use`, `the pipeline holds ${n} project${n === 1 ? '' : 's'} (trashed ones included): move them to another pipeline first`);
    }
    if (refused === 'head' && pipeline.is_default && (await getPipelineHead(ctx.accountId)).count > 1) {
      throw conflict('the default pipeline can be deleted only when it is the last: make another pipeline the default first');
    }
    return undefined;
  });
}
