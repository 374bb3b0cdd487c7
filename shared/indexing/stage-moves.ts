/**
 * A stage move (contract §19 `move_to`): the job a pipelines-update queues when it removes (or
 * changes the kind of) stages that hold projects. The pipeline's change committed at once, with
 * the job's item and `moves` (from stage → to stage, the old stage's last name) on the pipeline;
 * this job then moves every project of each old stage through the normal write path, as
 * projects-update does (`applyUpdate` with `stage_id`: the project's `project.updated` and
 * `project.stage_changed` events, its stage history, the use counts in its transaction), actor
 * `system`. It runs on the index-build queue (a job that rewrites an account's existing records:
 * the same lease, places and fairness, ./worker.ts).
 *
 * Resumable: each page of a stage's projects is saved through the lease; a worker that dies is
 * taken over once its lease runs out, and lists the old stage again from its start. A project
 * already moved is no longer in it; one that changed meanwhile is read again by the optimistic
 * write, which moves it only while it is still in the old stage (else nothing is written), so no
 * project moves twice.
 */
import '../domain/records/stages.js'; // the projects' placement (contract §19): the move goes through it
import type { IndexBuildItem, IndexBuildStatus, StageMove } from '../db/index-builds.js';
import type { StoredRecord } from '../db/items.js';
import type { JobLease } from '../db/job-lease.js';
import { getPipelineItem, type PipelineItem, resolveStage } from '../db/pipelines.js';
import type { OperationContext } from '../domain/context.js';
import { familyOf } from '../domain/records/family.js';
import { list } from '../domain/records/list.js';
import { inParallel } from '../domain/records/referencing.js';
import { applyUpdate } from '../domain/records/update.js';
import { ApiError } from '../errors.js';
import { projectEntity } from '../schemas/entities/index.js';
import { SYSTEM_ACTOR } from '../schemas/events.js';

/** Projects listed per page (the page's end is saved) and moved at once (as a batch writes its items). */
const PAGE_SIZE = 100;
const PARALLEL = 16;

const STATUS_OF_KIND = { open: 'open', won: 'completed', lost: 'canceled' } as const;

export interface StageMoveDeps {
  pageSize?: number;
  /** Called after each saved page (tests stop a move there to resume it). */
  afterPage?: (job: IndexBuildItem) => void | Promise<void>;
}

/** The write found the project no longer where the move takes projects from: nothing written. */
class NotInStage extends Error {}

/** Whether the project is still one the move of `from` must move. */
function inOldStage(record: Record<string, unknown>, pipeline: PipelineItem, from: string): boolean {
  if (record.pipeline_id !== pipeline.id || record.stage_id !== from) return false;
  // A stage whose kind changed keeps its id: the projects it held before have the old kind's status.
  const kept = pipeline.stages.find((s) => s.id === from);
  return !kept || record.status !== STATUS_OF_KIND[kept.kind];
}

/** Whether the project is still in the stage `id` of the pipeline (a refresh writes only those). */
const inStage = (record: Record<string, unknown>, pipeline: PipelineItem, id: string) => record.pipeline_id === pipeline.id && record.stage_id === id;

/**
 * Puts one project in `to` (a move, or its own stage again: its derived fields written as the
 * stage now is) if `still` holds for it as read; whether it changed.
 */
async function moveOne(ctx: OperationContext, id: string, to: string, still: (record: Record<string, unknown>) => boolean): Promise<boolean> {
  const fam = familyOf(projectEntity);
  try {
    const out = await applyUpdate(fam, ctx, { id, fields: { stage_id: to } }, undefined, {
      load: async () => undefined,
      // Decided on the record as read by each attempt of the optimistic write.
      items: (current: StoredRecord) => {
        if (!still(current)) throw new NotInStage();
        return [];
      },
    });
    return out.changed;
  } catch (error) {
    if (error instanceof NotInStage) return false;
    if (error instanceof ApiError && error.code === 'projects.not_found') return false; // deleted meanwhile
    throw error;
  }
}

export type StageMoveOutcome = 'completed' | 'gone';

/** Where one pass puts the projects of `stageId` as the pipeline now is, and which still qualify; undefined: the pass is over. */
type Pass = (pipeline: PipelineItem | undefined) => { to: string; still: (record: Record<string, unknown>) => boolean } | undefined;

export async function runStageMove(job: StageMove, lease: JobLease<IndexBuildItem, IndexBuildStatus>, deps: StageMoveDeps = {}): Promise<StageMoveOutcome> {
  const accountId = job.account_id;
  const ctx: OperationContext = { accountId, userId: 'system', operation: 'pipelines-update', headers: {}, actor: SYSTEM_ACTOR };
  const fam = familyOf(projectEntity);
  const pageSize = deps.pageSize ?? PAGE_SIZE;
  /** Pages through the projects of `stageId`, each page decided on the pipeline read again (a later change may have moved the target on), its progress saved through the lease. */
  const walk = async (stageId: string, pass: Pass): Promise<StageMoveOutcome | undefined> => {
    let cursor: string | undefined;
    for (;;) {
      const decided = pass(await getPipelineItem(accountId, job.pipeline_id));
      if (!decided) return undefined;
      const page = await list(fam, ctx, { filter: { field: 'stage_id', op: 'eq', value: stageId }, limit: pageSize, ...(cursor ? { cursor } : {}) });
      let changed = 0;
      await inParallel(page.items.filter(decided.still), PARALLEL, async (p) => {
        if (await moveOne(ctx, String(p.id), decided.to, decided.still)) changed++;
      });
      const current = lease.job;
      const saved = await lease.save({ position: current.position + 1, done: current.done + changed }, { position: current.position });
      if (!saved) return ((await lease.lost()) as StageMoveOutcome | undefined) ?? 'gone';
      await deps.afterPage?.(saved);
      if (!page.next_cursor) return undefined;
      cursor = page.next_cursor;
    }
  };
  for (const from of Object.keys(job.moves).sort()) {
    const ended = await walk(from, (pipeline) => {
      const entry = pipeline?.moves?.[from];
      // Deleted (it held no project any more), or a later move of the same stage took over.
      if (!pipeline || entry?.job_id !== job.id) return undefined;
      const target = resolveStage(pipeline, entry.to) ?? pipeline.stages.find((s) => s.kind === entry.kind) ?? pipeline.stages[0]!;
      return { to: target.id, still: (r) => inOldStage(r, pipeline, from) };
    });
    if (ended) return ended;
  }
  // Stages renamed or given a new probability or rot_days: each project still in one of them
  // written again through its placement, which derives `stage`, `probability` and `rotting_since`
  // from the stage as it is now (a project already up to date changes nothing and raises nothing).
  for (const stageId of job.refresh ?? []) {
    const ended = await walk(stageId, (pipeline) =>
      // Deleted or removed since: nothing to restate.
      pipeline?.stages.some((s) => s.id === stageId) ? { to: stageId, still: (r) => inStage(r, pipeline, stageId) } : undefined,
    );
    if (ended) return ended;
  }
  await lease.end({ status: 'completed', completed_at: new Date().toISOString() });
  return 'completed';
}
