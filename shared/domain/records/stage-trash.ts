/**
 * A project's deletion ends its stage visit and its restore begins a new one (contract §19), in
 * their own transactions: the hooks of ./trash-stage.ts, set where a function imports this module
 * (the projects' delete, batch delete and restore).
 */
import { getPipelineItem, resolveStage, stageMoveItems, trashedDelete, trashedPut } from '../../db/pipelines.js';
import { trashRetentionSeconds } from '../../db/trash.js';
import { beginVisit, closeCurrent, derivedOf, placeOf, timesOf, VISIT_SEQ } from './stage-visits.js';
import { trashStage } from './trash-stage.js';

// A deletion ends the current visit (the project stays in its pipeline's count while trashed,
// until its purge: shared/db/pipelines.ts settlePurged); a restore begins a new visit of that stage.
trashStage.deleted = (accountId, current, now) => {
  const place = placeOf(current);
  if (!place) return [];
  const purgeAt = new Date(Date.parse(now) + trashRetentionSeconds() * 1000).toISOString();
  return [...closeCurrent(accountId, current.id, current, timesOf(current), now), trashedPut(accountId, place, current.id, purgeAt)];
};
trashStage.restored = async (accountId, trashed, now, actor) => {
  const record = trashed.record;
  const place = placeOf(record);
  if (!place) return undefined;
  const pipeline = await getPipelineItem(accountId, place.pipelineId);
  // Its stage removed meanwhile: where that stage's projects were moved (contract §19 move_to).
  const stage = pipeline && resolveStage(pipeline, place.stageId);
  // Its pipeline deleted meanwhile (its purge settled at the purge time): the entry is gone, the restore fails.
  if (!pipeline || !stage) return { set: {}, items: [trashedDelete(accountId, place.pipelineId, record.id)] };
  const times = timesOf(record);
  closeCurrent(accountId, record.id, record, times, trashed.deleted_at); // its times as the deletion closed them
  const { seq, item } = beginVisit(accountId, record.id, record, times, pipeline, stage, now, actor);
  return {
    set: { ...derivedOf(pipeline, stage, now), stage_times: times, [VISIT_SEQ]: seq },
    items: [item, trashedDelete(accountId, place.pipelineId, record.id), ...stageMoveItems(accountId, place, { pipelineId: pipeline.id, stageId: stage.id }, pipeline)],
  };
};
