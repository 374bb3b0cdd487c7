/**
 * A record in a pipeline (contract §19; projects): where a write puts it, and what follows from
 * its stage. From the body's `pipeline_id`, `stage_id`, `status` and `stage` and the record as it
 * is, `placeStage` decides the pipeline and stage, the fields they derive (`stage`, `status`,
 * `probability`, `stage_entered_at`, `rotting_since`, `stage_times`) and the items of the same
 * transaction: the pipelines' use counts, the check that the stage still exists, and the stage
 * history's visits (the one ending, the one beginning).
 */
import { randomUUID } from 'node:crypto';
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { closeVisitItem, getPipelineItem, listPipelineItems, openVisitItem, type PipelineItem, type StagePlace, stageMoveItems, trashedDelete, trashedPut } from '../../db/pipelines.js';
import { trashRetentionSeconds } from '../../db/trash.js';
import { ApiError, type Family, invalidRequest } from '../../errors.js';
import type { Actor } from '../../schemas/events.js';
import { isUuid } from '../../schemas/primitives.js';
import { type Placement, setPlacement } from './placement.js';
import { trashStage } from './trash-stage.js';

type Stage = PipelineItem['stages'][number];
interface StageTime { visits: number; total_ms: number; first_entered_at: string; last_exited_at: string | null }

/** The status a stage's kind gives (open → open, won → completed, lost → canceled). */
const STATUS_OF_KIND = { open: 'open', won: 'completed', lost: 'canceled' } as const;
const KIND_OF_STATUS: Record<string, Stage['kind']> = { open: 'open', completed: 'won', canceled: 'lost' };


/** The record's count of stage visits so far (not an API field): the number of its current visit's item. */
const VISIT_SEQ = 'stage_visit_seq';
const DAY_MS = 86_400_000;
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
      pipeline = (await listPipelineItems(accountId)).find((p) => p.stages.some((s) => s.id === stageId));
    }
    stage = pipeline?.stages.find((s) => s.id === stageId);
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
    if ('status' in sent) {
      const kind = KIND_OF_STATUS[String(sent.status)];
      stage = kept?.kind === kind ? kept : pipeline.stages.find((s) => s.kind === kind);
    } else {
      stage = kept ?? pipeline.stages.find((s) => s.kind === 'open');
    }
    if (!stage) throw invalidStage('the pipeline has no stage of that kind');
  }
  if ('stage' in sent) throw invalidRequest(family, 'stage is read-only for a project in a pipeline: it is its stage\'s name (send stage_id)', [{ path: 'stage', message: 'is read-only in a pipeline' }]);
  return enter(accountId, id, current, pipeline!, stage, now, actor);
}

const timesOf = (r: StoredRecord | undefined): Record<string, StageTime> => structuredClone((r?.stage_times ?? {}) as Record<string, StageTime>);
const seqOf = (r: StoredRecord | undefined): number => Number(r?.[VISIT_SEQ] ?? 0);
const placeOf = (r: StoredRecord | undefined): StagePlace | undefined =>
  typeof r?.pipeline_id === 'string' && typeof r?.stage_id === 'string' ? { pipelineId: r.pipeline_id, stageId: r.stage_id } : undefined;

/** Closes the record's current visit (its time counted), if it has one. */
function closeCurrent(accountId: string, id: string, current: StoredRecord | undefined, times: Record<string, StageTime>, now: string): TransactItem[] {
  const place = placeOf(current);
  if (!place || typeof current?.stage_entered_at !== 'string') return [];
  const duration = Math.max(0, Date.parse(now) - Date.parse(current.stage_entered_at));
  const t = times[place.stageId];
  if (t) times[place.stageId] = { ...t, total_ms: t.total_ms + duration, last_exited_at: now };
  return seqOf(current) > 0 ? [closeVisitItem(accountId, id, seqOf(current), now, duration)] : [];
}

/** The fields a stage gives a record that entered it at `enteredAt`. */
const derivedOf = (pipeline: PipelineItem, stage: Stage, enteredAt: string) => ({
  pipeline_id: pipeline.id,
  stage_id: stage.id,
  stage: stage.name,
  status: STATUS_OF_KIND[stage.kind],
  probability: stage.probability,
  stage_entered_at: enteredAt,
  rotting_since: stage.kind === 'open' && stage.rot_days ? new Date(Date.parse(enteredAt) + stage.rot_days * DAY_MS).toISOString() : null,
});

/** A visit of `stage` begins: its count in the record's times, the visit's item. */
function beginVisit(accountId: string, id: string, current: StoredRecord | undefined, times: Record<string, StageTime>, pipeline: PipelineItem, stage: Stage, now: string, actor: unknown) {
  const t = times[stage.id];
  times[stage.id] = t ? { ...t, visits: t.visits + 1 } : { visits: 1, total_ms: 0, first_entered_at: now, last_exited_at: null };
  const seq = seqOf(current) + 1;
  return { seq, item: openVisitItem(accountId, id, { seq, stage_id: stage.id, stage_name: stage.name, pipeline_id: pipeline.id, entered_at: now, exited_at: null, duration_ms: null, actor }) };
}

function enter(accountId: string, id: string, current: StoredRecord | undefined, pipeline: PipelineItem, stage: Stage, now: string, actor: Actor): Placement {
  const from = placeOf(current);
  const moved = from?.pipelineId !== pipeline.id || from?.stageId !== stage.id;
  const derived = (enteredAt: string) => derivedOf(pipeline, stage, enteredAt);
  if (!moved) return { set: derived(String(current!.stage_entered_at ?? now)), items: [] };
  const times = timesOf(current);
  const items = closeCurrent(accountId, id, current, times, now);
  const { seq, item } = beginVisit(accountId, id, current, times, pipeline, stage, now, actor);
  items.push(item, ...stageMoveItems(accountId, from, { pipelineId: pipeline.id, stageId: stage.id }));
  return { set: { ...derived(now), stage_times: times, [VISIT_SEQ]: seq }, items };
}

/** Leaves the pipeline: stage, probability and times kept in history; `stage` keeps the last name. */
function leave(accountId: string, id: string, current: StoredRecord, now: string): Placement {
  const times = timesOf(current);
  const items = [...closeCurrent(accountId, id, current, times, now), ...stageMoveItems(accountId, placeOf(current), undefined)];
  return { set: { pipeline_id: null, stage_id: null, probability: null, stage_entered_at: null, rotting_since: null, stage_times: times }, items };
}

// A deletion ends the current visit (the project stays in its pipeline's count while trashed,
// until its purge: shared/db/pipelines.ts settlePurged); a restore begins a new visit of that stage.
trashStage.deleted = (accountId, current, now) => {
  const place = placeOf(current);
  if (!place) return [];
  const purgeAt = new Date(Date.parse(now) + trashRetentionSeconds() * 1000).toISOString();
  return [...closeCurrent(accountId, current.id, current, timesOf(current), now), trashedPut(accountId, place.pipelineId, current.id, purgeAt)];
};
trashStage.restored = async (accountId, trashed, now, actor) => {
  const record = trashed.record;
  const place = placeOf(record);
  const pipeline = place && (await getPipelineItem(accountId, place.pipelineId));
  const stage = pipeline && pipeline.stages.find((s) => s.id === place.stageId);
  if (!place) return undefined;
  // Its pipeline deleted meanwhile (its purge settled at the purge time): the entry is gone, the restore fails.
  if (!pipeline || !stage) return { set: {}, items: [trashedDelete(accountId, place.pipelineId, record.id)] };
  const times = timesOf(record);
  closeCurrent(accountId, record.id, record, times, trashed.deleted_at); // its times as the deletion closed them
  const { seq, item } = beginVisit(accountId, record.id, record, times, pipeline, stage, now, actor);
  return {
    set: { ...derivedOf(pipeline, stage, now), stage_times: times, [VISIT_SEQ]: seq },
    items: [item, trashedDelete(accountId, place.pipelineId, record.id), ...stageMoveItems(accountId, place, place)],
  };
};

// The projects' writes place through this module (./placement.ts): importing it sets the hook.
// A create's id is decided here, before its write: the visit it opens is keyed by it.
setPlacement(async (family, accountId, id, ...rest) => {
  const own = id ?? randomUUID();
  const placed = await placeStage(family, accountId, own, ...rest);
  return placed && { ...placed, id: own };
});
