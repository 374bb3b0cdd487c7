/**
 * A project's stay in a stage (contract §19), shared by the writes that place it (./stages.ts)
 * and by its deletion and restore (./stage-trash.ts): its stage times, the visit items of its
 * history, and the fields a stage gives it.
 */
import type { StoredRecord, TransactItem } from '../../db/items.js';
import { closeVisitItem, openVisitItem, type PipelineItem, type StagePlace, type VisitEnd } from '../../db/pipelines.js';

export type Stage = PipelineItem['stages'][number];
interface StageTime { visits: number; total_ms: number; first_entered_at: string; last_exited_at: string | null }

/** The status a stage's kind gives (open → open, won → completed, lost → canceled). */
export const STATUS_OF_KIND = { open: 'open', won: 'completed', lost: 'canceled' } as const;
/** The record's count of stage visits so far (not an API field): the number of its current visit's item. */
export const VISIT_SEQ = 'stage_visit_seq';
const DAY_MS = 86_400_000;

export const timesOf = (r: StoredRecord | undefined): Record<string, StageTime> => structuredClone((r?.stage_times ?? {}) as Record<string, StageTime>);
const seqOf = (r: StoredRecord | undefined): number => Number(r?.[VISIT_SEQ] ?? 0);
export const placeOf = (r: StoredRecord | undefined): StagePlace | undefined =>
  typeof r?.pipeline_id === 'string' && typeof r?.stage_id === 'string' ? { pipelineId: r.pipeline_id, stageId: r.stage_id } : undefined;

/** Ends the record's current visit in its times (its time counted): how it ended, when it has a visit item to end. */
export function endCurrent(current: StoredRecord | undefined, times: Record<string, StageTime>, now: string): VisitEnd | undefined {
  const place = placeOf(current);
  if (!place || typeof current?.stage_entered_at !== 'string') return undefined;
  const duration = Math.max(0, Date.parse(now) - Date.parse(current.stage_entered_at));
  const t = times[place.stageId];
  if (t) times[place.stageId] = { ...t, total_ms: t.total_ms + duration, last_exited_at: now };
  return seqOf(current) > 0 ? { exited_at: now, duration_ms: duration } : undefined;
}

/** Closes the record's current visit (its time counted), if it has one: its item's end written (a write that begins no visit). */
export function closeCurrent(accountId: string, id: string, current: StoredRecord | undefined, times: Record<string, StageTime>, now: string): TransactItem[] {
  const ended = endCurrent(current, times, now);
  return ended ? [closeVisitItem(accountId, id, seqOf(current), ended.exited_at, ended.duration_ms)] : [];
}

/** The fields a stage gives a record that entered it at `enteredAt`. */
export const derivedOf = (pipeline: PipelineItem, stage: Stage, enteredAt: string) => ({
  pipeline_id: pipeline.id,
  stage_id: stage.id,
  stage: stage.name,
  status: STATUS_OF_KIND[stage.kind],
  probability: stage.probability,
  stage_entered_at: enteredAt,
  rotting_since: stage.kind === 'open' && stage.rot_days ? new Date(Date.parse(enteredAt) + stage.rot_days * DAY_MS).toISOString() : null,
});

/**
 * A visit of `stage` begins: its count in the record's times, the visit's item. `ends`: the end of
 * the record's current visit (`endCurrent`), when this write ends it (a move): the new visit's
 * item holds it, so that a move writes one history item.
 */
export function beginVisit(accountId: string, id: string, current: StoredRecord | undefined, times: Record<string, StageTime>, pipeline: PipelineItem, stage: Stage, now: string, actor: unknown, ends?: VisitEnd) {
  const t = times[stage.id];
  times[stage.id] = t ? { ...t, visits: t.visits + 1 } : { visits: 1, total_ms: 0, first_entered_at: now, last_exited_at: null };
  const seq = seqOf(current) + 1;
  return { seq, item: openVisitItem(accountId, id, { seq, stage_id: stage.id, stage_name: stage.name, pipeline_id: pipeline.id, entered_at: now, exited_at: null, duration_ms: null, actor }, ends) };
}
