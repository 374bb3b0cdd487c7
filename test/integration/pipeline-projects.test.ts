/**
 * Projects in a pipeline (contract §19 "Projects gain …" and the stage history): placement on
 * create and update, status and stage following the stage, derived fields, stage times, the
 * validation errors, the pipelines' use (in_use, stage_in_use), and projects-stage-history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { itemSize, measureCapacity } from '../../shared/db/capacity.js';
import { db, tableName } from '../../shared/db/client.js';
import { placeStageIndex } from '../../shared/db/sorted-index.js';
import { keys } from '../../shared/db/table.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';
import { fileIndexBuildQueue } from '../helpers/stream.js';

// A change that restates a stage queues the job that writes its projects again (not run here).
beforeAll(fileIndexBuildQueue);

interface Stage { id: string; name: string; kind: string; probability: number; rot_days: number | null }
interface Pipeline { id: string; stages: Stage[]; version: number }
type Project = Record<string, unknown> & { id: string; stage_times: Record<string, { visits: number; total_ms: number; first_entered_at: string; last_exited_at: string | null }> };

const STAGES = [{ name: 'Lead' }, { name: 'Proposal', probability: 40, rot_days: 14 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
const pipelineOf = (auth: ReturnType<typeof newAccount>, name = 'Sales') => ok<Pipeline>('pipelines-create', { name, stages: STAGES }, auth);
const code = async (op: string, body: unknown, auth: ReturnType<typeof newAccount>) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code };
};
const DAY = 86_400_000;
let worker: StreamPoller | undefined;
afterAll(async () => {
  await worker?.stop();
});

describe('projects in a pipeline', () => {
  it('places a project on create: pipeline alone → first open stage, stage alone → its pipeline; status, stage and probability follow', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal, won] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', pipeline_id: p.id, amount: 1000, currency: 'USD' }, auth);
    expect(a).toMatchObject({ pipeline_id: p.id, stage_id: lead!.id, stage: 'Lead', status: 'open', probability: 0, rotting_since: null, closed_at: null });
    expect(a.stage_entered_at).toBe(a.created_at);
    expect(a.stage_times).toEqual({ [lead!.id]: { visits: 1, total_ms: 0, first_entered_at: a.created_at, last_exited_at: null } });
    expect(a).not.toHaveProperty('stage_visit_seq');

    const b = await ok<Project>('projects-create', { name: 'B', stage_id: proposal!.id }, auth);
    expect(b).toMatchObject({ pipeline_id: p.id, stage_id: proposal!.id, stage: 'Proposal', status: 'open', probability: 40 });
    expect(Date.parse(String(b.rotting_since)) - Date.parse(String(b.stage_entered_at))).toBe(14 * DAY);

    const c = await ok<Project>('projects-create', { name: 'C', pipeline_id: p.id, status: 'completed' }, auth);
    expect(c).toMatchObject({ stage_id: won!.id, stage: 'Won', status: 'completed', probability: 100 });
    expect(c.closed_at).toBe(c.created_at);

    const plain = await ok<Project>('projects-create', { name: 'Plain', stage: 'free text', status: 'canceled' }, auth);
    expect(plain).toMatchObject({ pipeline_id: null, stage_id: null, stage: 'free text', status: 'canceled', probability: null, stage_entered_at: null, rotting_since: null, stage_times: {} });

    // §17: a stage's projects (a board column's continuation), a pipeline's, sorted by stage
    const column = await ok<{ items: Project[] }>('projects-list', { filter: { field: 'stage_id', op: 'eq', value: proposal!.id } }, auth);
    expect(column.items.map((x) => x.id)).toEqual([b.id]);
    const inPipeline = await ok<{ items: Project[] }>('projects-list', { filter: { field: 'pipeline_id', op: 'eq', value: p.id } }, auth);
    expect(inPipeline.items.map((x) => x.id)).toEqual([c.id, b.id, a.id]);
    const outside = await ok<{ items: Project[] }>('projects-list', { filter: { field: 'pipeline_id', op: 'not_exists' } }, auth);
    expect(outside.items.map((x) => x.id)).toEqual([plain.id]);
  });

  it('a stage change\'s commit, with its history, costs at most 4 write units more than an ordinary update (transactions billed as AWS bills them)', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', stage_id: lead!.id, amount: 100, currency: 'USD' }, auth);
    await ok('projects-update', { id: a.id, name: 'warm' }, auth);
    const ordinary = (await measureCapacity(() => ok('projects-update', { id: a.id, name: 'A2' }, auth))).usage;
    const move = (await measureCapacity(() => ok('projects-update', { id: a.id, stage_id: proposal!.id }, auth))).usage;
    const back = (await measureCapacity(() => ok('projects-update', { id: a.id, stage_id: lead!.id }, auth))).usage;
    // An ordinary update is the record's UpdateItem alone (no transaction); a move's commit is one
    // transaction, billed as AWS bills it (2 units per item and KB: `transactWcuBilled`; DynamoDB
    // Local under-reports transactions). Beyond the record's own write in it, at most 4 units.
    expect(ordinary.transactWcuBilled).toBe(0);
    const raw = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.record(auth.accountId, 'project', a.id) }))).Item!;
    const recordUnits = 2 * Math.ceil(itemSize(raw) / 1024);
    for (const u of [move, back]) expect(u.transactWcuBilled - recordUnits).toBeLessThanOrEqual(4);
    // Besides the commit, both write the same: sort-ordered entries, the key's use (within a unit).
    expect(Math.abs(move.wcu - back.wcu)).toBeLessThanOrEqual(1);
    const history = await ok<{ items: { stage_id: string; exited_at: string | null }[] }>('projects-stage-history', { project_id: a.id }, auth);
    expect(history.items.map((v) => [v.stage_id, v.exited_at !== null])).toEqual([
      [lead!.id, true],
      [proposal!.id, true],
      [lead!.id, false],
    ]);
  });

  it('upgrade: place-stage-index gives records written before GSI2 their place in it (a stage\'s projects)', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'old', stage_id: lead!.id }, auth);
    const b = await ok<Project>('projects-create', { name: 'new', stage_id: lead!.id }, auth);
    await ok<Project>('projects-create', { name: 'outside' }, auth);
    // as an earlier version wrote it: no GSI2 attributes
    await db().send(new UpdateCommand({ TableName: tableName(), Key: keys.record(auth.accountId, 'project', a.id), UpdateExpression: 'REMOVE gsi2pk, gsi2sk' }));
    const filter = { field: 'stage_id', op: 'eq', value: lead!.id };
    const column = async () => (await ok<{ items: Project[] }>('projects-list', { filter }, auth)).items.map((x) => x.id);
    expect(await column()).toEqual([b.id]);
    const done = await placeStageIndex({ table: tableName(), segments: 2 });
    expect(done.placed).toBeGreaterThanOrEqual(1);
    expect(await column()).toEqual([b.id, a.id]);
    expect((await placeStageIndex({ table: tableName(), segments: 2 })).placed).toBe(0);
  });

  it('moves a project between stages and out of the pipeline, keeping its stage times', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal, won, lost] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', pipeline_id: p.id }, auth);
    await new Promise((r) => setTimeout(r, 20));
    const m1 = await ok<Project>('projects-update', { id: a.id, stage_id: proposal!.id }, auth);
    expect(m1).toMatchObject({ stage_id: proposal!.id, stage: 'Proposal', status: 'open', probability: 40 });
    expect(m1.stage_times[lead!.id]!.total_ms).toBeGreaterThanOrEqual(20);
    expect(m1.stage_times[lead!.id]!.last_exited_at).toBe(m1.stage_entered_at);
    expect(m1.stage_times[proposal!.id]).toMatchObject({ visits: 1, total_ms: 0, last_exited_at: null });

    // status moves it to the first stage of that kind
    const m2 = await ok<Project>('projects-update', { id: a.id, status: 'canceled' }, auth);
    expect(m2).toMatchObject({ stage_id: lost!.id, stage: 'Lost', status: 'canceled', probability: 0, rotting_since: null });
    expect(m2.closed_at).toBeTruthy();
    const m3 = await ok<Project>('projects-update', { id: a.id, stage_id: lead!.id }, auth);
    expect(m3).toMatchObject({ status: 'open', closed_at: null });
    expect(m3.stage_times[lead!.id]!.visits).toBe(2);
    // an update of other fields leaves the stage alone
    const m4 = await ok<Project>('projects-update', { id: a.id, name: 'A2' }, auth);
    expect(m4.stage_entered_at).toBe(m3.stage_entered_at);
    // status and stage_id must agree
    expect(await code('projects-update', { id: a.id, stage_id: won!.id, status: 'open' }, auth)).toEqual({ status: 400, code: 'projects.invalid_stage_id' });
    expect((await ok<Project>('projects-update', { id: a.id, stage_id: won!.id, status: 'completed' }, auth)).status).toBe('completed');
    // writing stage in a pipeline
    expect(await code('projects-update', { id: a.id, stage: 'Elsewhere' }, auth)).toEqual({ status: 400, code: 'projects.invalid_request' });
    // leaving: the last stage name stays as free text, times kept
    const out = await ok<Project>('projects-update', { id: a.id, pipeline_id: null }, auth);
    expect(out).toMatchObject({ pipeline_id: null, stage_id: null, stage: 'Won', probability: null, stage_entered_at: null, rotting_since: null });
    expect(out.stage_times[won!.id]!.last_exited_at).toBeTruthy();
    expect((await ok<Project>('projects-update', { id: a.id, stage: 'free again', status: 'open' }, auth)).stage).toBe('free again');
  });

  it('refuses unknown pipelines and stages, of this account or another', async () => {
    const auth = newAccount();
    const other = newAccount();
    const p = await pipelineOf(auth);
    const q = await pipelineOf(auth, 'Other');
    const foreign = await pipelineOf(other);
    const cases: [Record<string, unknown>, string][] = [
      [{ pipeline_id: foreign.id }, 'projects.invalid_pipeline_id'],
      [{ pipeline_id: 'nope' }, 'projects.invalid_pipeline_id'],
      [{ pipeline_id: '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f' }, 'projects.invalid_pipeline_id'],
      [{ stage_id: foreign.stages[0]!.id }, 'projects.invalid_stage_id'],
      [{ pipeline_id: p.id, stage_id: q.stages[0]!.id }, 'projects.invalid_stage_id'],
      [{ stage_id: 'nope' }, 'projects.invalid_stage_id'],
      [{ pipeline_id: null, stage_id: p.stages[0]!.id }, 'projects.invalid_stage_id'],
      [{ pipeline_id: p.id, stage: 'x' }, 'projects.invalid_request'],
      [{ pipeline_id: 5 }, 'projects.invalid_request'],
      [{ probability: 50 }, 'projects.invalid_request'],
      [{ stage_times: {} }, 'projects.invalid_request'],
    ];
    for (const [body, expected] of cases) expect((await code('projects-create', { name: 'X', ...body }, auth)).code, JSON.stringify(body)).toBe(expected);
    expect((await ok<{ items: unknown[] }>('projects-list', {}, auth)).items).toEqual([]);
  });

  it('keeps the pipelines\' use: in_use while a project is in it (trashed too), stage_in_use for a stage that holds projects', async () => {
    const auth = newAccount();
    const main = await pipelineOf(auth);
    const p = await pipelineOf(auth, 'Second');
    const [lead, proposal, won, lost] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', stage_id: proposal!.id }, auth);
    expect(await code('pipelines-delete', { id: p.id }, auth)).toEqual({ status: 409, code: 'pipelines.in_use' });
    const without = [{ id: lead!.id, name: 'Lead' }, { id: won!.id, name: 'Won', kind: 'won' }, { id: lost!.id, name: 'Lost', kind: 'lost' }];
    const inUse = await invoke('pipelines-update', { id: p.id, stages: without }, auth);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error?.code).toBe('pipelines.stage_in_use');
    expect(inUse.body.error?.message).toContain('Proposal');
    expect((await code('pipelines-update', { id: p.id, stages: [{ id: lead!.id, name: 'Lead' }, { id: proposal!.id, name: 'Proposal', kind: 'won' }, { id: won!.id, name: 'Won', kind: 'won' }, { id: lost!.id, name: 'Lost', kind: 'lost' }] }, auth)).code).toBe('pipelines.stage_in_use');
    // renaming the stage is fine
    expect((await ok<Pipeline>('pipelines-update', { id: p.id, stages: [{ id: lead!.id, name: 'Lead' }, { id: proposal!.id, name: 'Offer', probability: 60 }, { id: won!.id, name: 'Won', kind: 'won' }, { id: lost!.id, name: 'Lost', kind: 'lost' }] }, auth)).version).toBe(2);

    await ok('projects-delete', { id: a.id }, auth);
    expect(await code('pipelines-delete', { id: p.id }, auth)).toEqual({ status: 409, code: 'pipelines.in_use' });
    await ok('projects-restore', { id: a.id }, auth);
    // moving it to another pipeline frees this one
    const moved = await ok<Project>('projects-update', { id: a.id, pipeline_id: main.id }, auth);
    expect(moved).toMatchObject({ pipeline_id: main.id, stage_id: main.stages[0]!.id });
    expect((await ok<Pipeline>('pipelines-update', { id: p.id, stages: without }, auth)).stages).toHaveLength(3);
    expect(await ok('pipelines-delete', { id: p.id }, auth)).toEqual({ deleted: true });
    expect(await code('projects-update', { id: a.id, stage_id: proposal!.id }, auth)).toEqual({ status: 400, code: 'projects.invalid_stage_id' });
  });

  it('lists the stage history, oldest first, with the stage names as they were', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal, won] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', pipeline_id: p.id }, auth);
    await ok('projects-update', { id: a.id, stage_id: proposal!.id }, auth);
    await ok('pipelines-update', { id: p.id, stages: [{ id: lead!.id, name: 'Lead' }, { id: proposal!.id, name: 'Offer' }, ...p.stages.slice(2).map((s) => ({ id: s.id, name: s.name, kind: s.kind }))] }, auth);
    await ok('projects-update', { id: a.id, stage_id: won!.id }, auth);
    await ok('projects-update', { id: a.id, pipeline_id: null }, auth);
    await ok('projects-update', { id: a.id, pipeline_id: p.id }, auth);
    type Visit = { stage_id: string; stage_name: string; pipeline_id: string; entered_at: string; exited_at: string | null; duration_ms: number | null; actor: unknown };
    const all = await ok<{ items: Visit[]; next_cursor: string }>('projects-stage-history', { project_id: a.id }, auth);
    expect(all.next_cursor).toBe('');
    expect(all.items.map((v) => [v.stage_id, v.stage_name])).toEqual([[lead!.id, 'Lead'], [proposal!.id, 'Proposal'], [won!.id, 'Won'], [lead!.id, 'Lead']]);
    expect(all.items.slice(0, 3).every((v) => v.exited_at !== null && typeof v.duration_ms === 'number')).toBe(true);
    expect(all.items[3]).toMatchObject({ exited_at: null, duration_ms: null, pipeline_id: p.id, actor: { type: 'api_key' } });
    expect(all.items[1]!.exited_at).toBe(all.items[2]!.entered_at);
    const page1 = await ok<{ items: Visit[]; next_cursor: string }>('projects-stage-history', { project_id: a.id, limit: 3 }, auth);
    expect(page1.items).toHaveLength(3);
    const page2 = await ok<{ items: Visit[]; next_cursor: string }>('projects-stage-history', { project_id: a.id, limit: 3, cursor: page1.next_cursor }, auth);
    expect([...page1.items, ...page2.items]).toEqual(all.items);
    expect(page2.next_cursor).toBe('');
    expect(await code('projects-stage-history', { project_id: a.id }, newAccount())).toEqual({ status: 404, code: 'projects.not_found' });
    expect((await code('projects-stage-history', { project_id: a.id, cursor: 'abc' }, auth)).code).toBe('projects.invalid_cursor');
    expect((await code('projects-stage-history', { project_id: 'x' }, auth)).code).toBe('projects.invalid_id');
  });

  it('ends the stage visit on deletion (single and batch) and begins a new one of that stage on restore, in the same commit', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [, proposal] = p.stages;
    type Visit = { stage_id: string; stage_name: string; entered_at: string; exited_at: string | null; duration_ms: number | null };
    type Trashed = { items: Array<{ record: { id: string }; deleted_at: string }> };
    const a = await ok<Project>('projects-create', { name: 'A', stage_id: proposal!.id }, auth);
    const b = await ok<Project>('projects-create', { name: 'B', stage_id: proposal!.id }, auth);
    await ok('projects-delete', { id: a.id }, auth);
    await ok('projects-batch-delete', { ids: [b.id] }, auth);
    const trash = (await ok<Trashed>('trash-list', {}, auth)).items;
    for (const x of [a, b]) {
      const deletedAt = trash.find((t) => t.record.id === x.id)!.deleted_at;
      const restored = await ok<Project>('projects-restore', { id: x.id }, auth);
      expect(restored).toMatchObject({ pipeline_id: p.id, stage_id: proposal!.id, stage: 'Proposal', probability: 40 });
      expect(restored.stage_entered_at).toBe(restored.updated_at);
      expect(Date.parse(String(restored.rotting_since)) - Date.parse(String(restored.stage_entered_at))).toBe(14 * DAY);
      expect(restored.stage_times[proposal!.id]).toEqual({ visits: 2, total_ms: Date.parse(deletedAt) - Date.parse(String(x.created_at)), first_entered_at: x.created_at, last_exited_at: deletedAt });
      const visits = (await ok<{ items: Visit[] }>('projects-stage-history', { project_id: x.id }, auth)).items;
      expect(visits).toMatchObject([
        { stage_id: proposal!.id, entered_at: x.created_at, exited_at: deletedAt, duration_ms: Date.parse(deletedAt) - Date.parse(String(x.created_at)) },
        { stage_id: proposal!.id, stage_name: 'Proposal', entered_at: restored.updated_at, exited_at: null, duration_ms: null },
      ]);
      // the restored project moves on from its new visit
      await ok('projects-update', { id: x.id, stage_id: p.stages[0]!.id }, auth);
      const after = (await ok<{ items: Visit[] }>('projects-stage-history', { project_id: x.id }, auth)).items;
      expect(after).toHaveLength(3);
      expect(after[1]!.exited_at).toBe(after[2]!.entered_at);
    }
    // a project outside a pipeline is deleted and restored as before
    const plain = await ok<Project>('projects-create', { name: 'Plain' }, auth);
    await ok('projects-delete', { id: plain.id }, auth);
    expect(await ok<Project>('projects-restore', { id: plain.id }, auth)).toMatchObject({ pipeline_id: null, stage_times: {} });
  });

  it('a trashed project leaves its pipeline\'s count when purged: the pipeline can then be deleted', async () => {
    const auth = newAccount();
    await pipelineOf(auth, 'Main');
    const p = await pipelineOf(auth, 'Second');
    const kept = await ok<Project>('projects-create', { name: 'Kept', pipeline_id: p.id }, auth);
    await ok('projects-delete', { id: kept.id }, auth);
    process.env.TRASH_RETENTION_DAYS = String(1 / 86_400); // one second
    try {
      const a = await ok<Project>('projects-create', { name: 'A', pipeline_id: p.id }, auth);
      const b = await ok<Project>('projects-create', { name: 'B', pipeline_id: p.id }, auth);
      await ok('projects-delete', { id: a.id }, auth);
      // deleted, restored, deleted again: counted once
      await ok('projects-delete', { id: b.id }, auth);
      await ok('projects-restore', { id: b.id }, auth);
      await ok('projects-delete', { id: b.id }, auth);
      await new Promise((r) => setTimeout(r, 1_100));
      // a purge not yet due (30 days) still holds the pipeline
      expect(await code('pipelines-delete', { id: p.id }, auth)).toEqual({ status: 409, code: 'pipelines.in_use' });
      await ok('projects-restore', { id: kept.id }, auth);
      await ok('projects-update', { id: kept.id, pipeline_id: null }, auth);
      expect(await code('projects-restore', { id: a.id }, auth)).toEqual({ status: 404, code: 'projects.not_found' });
      expect(await ok('pipelines-delete', { id: p.id }, auth)).toEqual({ deleted: true });
    } finally {
      delete process.env.TRASH_RETENTION_DAYS;
    }
  });

  it('raises project.stage_changed beside project.updated, in the change log, with the place it left', async () => {
    const auth = newAccount();
    worker ??= await startTestStreamWorker();
    const p = await pipelineOf(auth);
    const [lead, proposal] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'A', pipeline_id: p.id }, auth);
    await ok('projects-update', { id: a.id, stage_id: proposal!.id }, auth);
    await ok('projects-update', { id: a.id, name: 'renamed only' }, auth);
    await ok('projects-update', { id: a.id, pipeline_id: null }, auth);
    await worker.drain();
    type Event = { id: string; event: string; record_id: string; data: Project; previous_attributes?: Record<string, unknown>; actor: unknown };
    const events = (await ok<{ items: Event[] }>('events-list', { record_id: a.id, limit: 100 }, auth)).items;
    expect(events.map((e) => e.event)).toEqual(['project.created', 'project.stage_changed', 'project.updated', 'project.stage_changed', 'project.updated', 'project.updated', 'project.stage_changed']);
    const changed = events.filter((e) => e.event === 'project.stage_changed');
    expect(changed.map((e) => e.previous_attributes)).toEqual([
      { pipeline_id: null, stage_id: null, stage: '', status: 'open' },
      { pipeline_id: p.id, stage_id: lead!.id, stage: 'Lead', status: 'open' },
      { pipeline_id: p.id, stage_id: proposal!.id, stage: 'Proposal', status: 'open' },
    ]);
    expect(changed[1]!.data).toMatchObject({ stage_id: proposal!.id, stage: 'Proposal' });
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const byType = (await ok<{ items: Event[] }>('events-list', { types: ['project.stage_changed'], limit: 100 }, auth)).items;
    expect(byType.map((e) => e.id)).toEqual(changed.map((e) => e.id));
  });
});
