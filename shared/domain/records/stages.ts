/**
 * A record in a pipeline (contract §19; projects): where a write puts it, and what follows from
 * its stage. From the body's `pipeline_id`, `stage_id`, `status` and `stage` and the record as it
 * is, `placeStage` decides the pipeline and stage, the fields they derive (`stage`, `status`,
 * `probability`, `stage_entered_at`, `rotting_since`, `stage_times`) and the items of the same
 * transaction: the pipelines' use counts, the check that the stage still exists, and the stage
 * history's visits (the one ending, the one beginning).
 */
import { randomUUID } from 'node:crypto';
import type { StoredRecord } from '../../db/items.js';
import { getPipelineItem, listPipelineItems, type PipelineItem, stageMoveItems } from '../../db/pipelines.js';
import { ApiError, type Family, invalidRequest } from '../../errors.js';
import type { Actor } from '../../schemas/events.js';
import { isUuid } from '../../schemas/primitives.js';
import { createRecord } from '../../db/record-store.js';
import { actorOf } from '../context.js';
import { writing } from './family.js';
import { bulkPlacement, type Placement, setPlacement } from './placement.js';
import { beginVisit, closeCurrent, derivedOf, endCurrent, placeOf, type Stage, STATUS_OF_KIND, timesOf, VISIT_SEQ } from './stage-visits.js';

const KIND_OF_STATUS: Record<string, Stage['kind']> = { open: 'open', completed: 'won', canceled: 'lost' };
const PLACE_FIELDS = ['pipeline_id', 'stage_id', 'status', 'stage'] as const;

/**
 * Where a create or update puts the record, or undefined when it neither is nor goes in a
 * pipeline (then `stage` and `status` are free, contract §8). `current` is the record as read
 * (undefined on create); `id` its id (a create's is decided before its write).
 */
async function placeStage(
  family: Family,
  accountId: string,
  id: string,
  sent: Record<string, unknown>,
  current: StoredRecord | undefined,
  now: string,
  actor: Actor,
): Promise<Placement | undefined> {
  const inPipeline = typeof current?.pipeline_id === 'string' && typeof current?.stage_id === 'string';
  if (!inPipeline && !('pipeline_id' in sent) && !('stage_id' in sent)) return undefined;
  if (!PLACE_FIELDS.some((f) => f in sent)) return undefined;
  const invalidStage = (message: string) => new ApiError(`${family}.invalid_stage_id`, message, [{ path: 'stage_id', message }]);
  const invalidPipeline = (message: string) => new ApiError(`${family}.invalid_pipeline_id`, message, [{ path: 'pipeline_id', message }]);

  // In a stage being moved (contract §19 move_to), it stays there until the move reaches it: naming
  // that stage again, or only its pipeline (and its own status), changes nothing.
  const stays = (p: PipelineItem | undefined) => {
    const yes = inPipeline && p?.id === current!.pipeline_id && !!p?.moves?.[current!.stage_id as string] && (!('status' in sent) || sent.status === current!.status);
    if (yes && 'stage' in sent) throw stageReadOnly(family);
    return yes;
  };
  const sentPipeline = 'pipeline_id' in sent ? sent.pipeline_id : undefined;
  const sentStage = 'stage_id' in sent ? sent.stage_id : undefined;
  if (sentPipeline !== undefined && sentPipeline !== null && !isUuid(sentPipeline)) throw invalidPipeline('pipeline_id must be a UUID or null');
  if (sentStage !== undefined && sentStage !== null && !isUuid(sentStage)) throw invalidStage('stage_id must be a UUID or null');

  // Leaving: pipeline_id null, or stage_id null alone.
  if (sentPipeline === null || (sentStage === null && sentPipeline === undefined)) {
    if (typeof sentStage === 'string') throw invalidStage('stage_id must be null when pipeline_id is null');
    return inPipeline ? leave(accountId, id, current!, now) : undefined;
  }

  let pipeline: PipelineItem | undefined;
  let stage: Stage | undefined;
  if (typeof sentStage === 'string') {
    const stageId = sentStage.toLowerCase();
    if (typeof sentPipeline === 'string') {
      pipeline = await getPipelineItem(accountId, sentPipeline.toLowerCase());
      if (!pipeline) throw invalidPipeline('pipeline_id is not a pipeline of this account');
    } else {
      // Its own stage named again: its pipeline (the stage may be one being moved, below).
      pipeline = inPipeline && stageId === current!.stage_id ? await getPipelineItem(accountId, current!.pipeline_id as string) : (await listPipelineItems(accountId)).find((p) => p.stages.some((s) => s.id === stageId));
    }
    stage = pipeline?.stages.find((s) => s.id === stageId);
    if (!stage && stageId === current?.stage_id && stays(pipeline)) return undefined;
    if (!stage) throw invalidStage(typeof sentPipeline === 'string' ? 'stage_id is not a stage of pipeline_id' : 'stage_id is not a stage of a pipeline of this account');
    if ('status' in sent && sent.status !== STATUS_OF_KIND[stage.kind]) throw invalidStage(`status ${String(sent.status)} does not agree with stage_id, a ${stage.kind} stage (status ${STATUS_OF_KIND[stage.kind]})`);
  } else {
    const pipelineId = typeof sentPipeline === 'string' ? sentPipeline.toLowerCase() : (current!.pipeline_id as string);
    pipeline = await getPipelineItem(accountId, pipelineId);
    if (!pipeline) {
      if (typeof sentPipeline === 'string') throw invalidPipeline('pipeline_id is not a pipeline of this account');
      throw invalidStage('the project\'s pipeline no longer exists');
    }
    const samePipeline = inPipeline && pipeline.id === current!.pipeline_id;
    const kept = samePipeline ? pipeline.stages.find((s) => s.id === current!.stage_id) : undefined;
    if (!kept && stays(pipeline)) return undefined;
    if ('status' in sent) {
      const kind = KIND_OF_STATUS[String(sent.status)];
      stage = kept?.kind === kind ? kept : pipeline.stages.find((s) => s.kind === kind);
    } else {
      stage = kept ?? pipeline.stages.find((s) => s.kind === 'open');
    }
    if (!stage) throw invalidStage('the pipeline has no stage of that kind');
  }
  if ('stage' in sent) throw stageReadOnly(family);
  return enter(accountId, id, current, pipeline!, stage, now, actor);
}

const stageReadOnly = (family: Family) => invalidRequest(family, 'stage is read-only for a project in a pipeline: it is its stage\'s name (send stage_id)', [{ path: 'stage', message: 'is read-only in a pipeline' }]);
function enter(accountId: string, id: string, current: StoredRecord | undefined, pipeline: PipelineItem, stage: Stage, now: string, actor: Actor): Placement {
  const from = placeOf(current);
  const moved = from?.pipelineId !== pipeline.id || from?.stageId !== stage.id;
  const derived = (enteredAt: string) => derivedOf(pipeline, stage, enteredAt);
  if (!moved) return { set: derived(String(current!.stage_entered_at ?? now)), items: [] };
  const times = timesOf(current);
  // One history item: the visit it begins holds the end of the one it ends.
  const ended = endCurrent(current, times, now);
  const { seq, item } = beginVisit(accountId, id, current, times, pipeline, stage, now, actor, ended);
  return { set: { ...derived(now), stage_times: times, [VISIT_SEQ]: seq }, items: [item, ...stageMoveItems(accountId, from, { pipelineId: pipeline.id, stageId: stage.id }, pipeline)] };
}

/** Leaves the pipeline: stage, probability and times kept in history; `stage` keeps the last name. */
function leave(accountId: string, id: string, current: StoredRecord, now: string): Placement {
  const times = timesOf(current);
  const items = [...closeCurrent(accountId, id, current, times, now), ...stageMoveItems(accountId, placeOf(current), undefined)];
  return { set: { pipeline_id: null, stage_id: null, probability: null, stage_entered_at: null, rotting_since: null, stage_times: times }, items };
}

// A bulk create's placed drafts: each in its own transaction with its stage items, as a single create.
bulkPlacement.create = async (fam, ctx, drafts, skipExisting, fail) => {
  const placed = drafts.filter((d) => d.checks);
  const existing = skipExisting && placed.length ? await fam.store.getManyConsistent(ctx.accountId, placed.map((d) => d.id!)) : undefined;
  // 16 at once (./referencing.ts has inParallel, but its module carries every family's definition).
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let d = placed[next++]; d; d = placed[next++]) {
      try {
        d.record = existing?.get(d.id!) ?? (await writing(fam, () => createRecord(fam.store, { accountId: ctx.accountId, userId: ctx.userId, fields: d!.draft, now: d!.now, actor: actorOf(ctx), id: d!.id, checks: d!.checks })));
      } catch (error) {
        fail(d, error);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
};

// The projects' writes place through this module (./placement.ts): importing it sets the hook.
// A create's id is decided here, before its write: the visit it opens is keyed by it.
setPlacement(async (family, accountId, id, ...rest) => {
  const own = id ?? randomUUID();
  const placed = await placeStage(family, accountId, own, ...rest);
  return placed && { ...placed, id: own };
});
