/**
 * Stage moves (contract §19 `move_to`): a pipelines-update that removes a stage holding projects,
 * or changes its kind, commits at once and queues a job that moves every project of the old stage
 * through the normal write path (events, stage history, use counts), actor system. The job stopped
 * mid-way resumes once its lease runs out (nothing moved twice); while it runs the old stage is
 * still the place of its projects and no write can enter it; another account's job is not behind it.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexBuildHandler } from '../../functions/custom-fields/index-worker.js';
import { functionByName } from '../../functions/topology.js';
import { asFunction } from '../../local/iam.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import { bindingEnv } from '../../shared/config/bindings.js';
import { getIndexBuild, listActiveIndexBuilds } from '../../shared/db/index-builds.js';
import { getPipelineUse } from '../../shared/db/pipelines.js';
import { runIndexBuild } from '../../shared/indexing/worker.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { startTestStream } from '../helpers/stream.js';

interface Stage { id: string; name: string; kind: string; probability: number; rot_days: number | null }
interface Pipeline { id: string; stages: Stage[]; version: number }
type Project = Record<string, unknown> & { id: string; stage_id: string; stage: string; status: string; stage_times: Record<string, { visits: number; total_ms: number }> };
type Visit = { stage_id: string; stage_name: string; exited_at: string | null; actor: unknown };
type Auth = ReturnType<typeof newAccount>;

const STAGES = [{ name: 'Lead' }, { name: 'Proposal', probability: 40 }, { name: 'Old', probability: 20 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
const code = async (op: string, body: unknown, auth: Auth) => (await invoke(op, body, auth)).body.error?.code;
const keep = (stages: Stage[], ...names: string[]) => stages.filter((s) => names.includes(s.name)).map(({ id, name, kind, probability }) => ({ id, name, kind, probability }));

let queue: LocalQueue;
let worker: StreamPoller | undefined;
beforeAll(async () => {
  // pipelines-update queues the move; this file runs the index-build worker itself.
  queue = await startLocalQueue('crm-stage-moves');
  Object.assign(process.env, { [bindingEnv('indexBuildsQueue')]: queue.queueUrl, AWS_ENDPOINT_URL_SQS: queue.endpoint });
  worker = await startTestStream({ awsEndpoint: queue.endpoint });
});
afterAll(async () => {
  await worker?.stop();
  await queue?.stop();
});

/** The move queued for the account (the message's content), from the running jobs' markers. */
async function moveOf(accountId: string): Promise<{ account_id: string; build_id: string }> {
  const found = (await listActiveIndexBuilds()).filter((m) => m.account_id === accountId);
  expect(found).toHaveLength(1);
  return { account_id: accountId, build_id: found[0]!.build_id };
}

async function projectsIn(auth: Auth, stageId: string): Promise<Project[]> {
  const out: Project[] = [];
  let cursor = '';
  for (;;) {
    const page = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { filter: { field: 'stage_id', op: 'eq', value: stageId }, limit: 100, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    if (!page.next_cursor) return out;
    cursor = page.next_cursor;
  }
}

describe('moving the projects of a removed stage (move_to)', () => {
  it('commits the change at once, moves every project through the write path after a crash mid-way, none twice, counts exact', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES }, auth);
    const [lead, proposal, old] = p.stages;
    const N = 40;
    const moving: Project[] = [];
    for (let i = 0; i < N; i++) moving.push(await ok<Project>('projects-create', { name: `m${i}`, stage_id: old!.id, amount: 100 * i, currency: 'USD' }, auth));
    const staying = await ok<Project>('projects-create', { name: 'stays', stage_id: lead!.id }, auth);
    const trashed = await ok<Project>('projects-create', { name: 'trashed', stage_id: old!.id }, auth);
    await ok('projects-delete', { id: trashed.id }, auth);

    // Without move_to: refused, naming the stage and its count (the trashed one included).
    const refused = await invoke('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost') }, auth);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe('pipelines.stage_in_use');
    expect(refused.body.error?.message).toContain(`holds ${N + 1} projects`);
    // move_to must lead from a stage that leaves to one that stays.
    expect(await code('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost'), move_to: { [old!.id]: old!.id } }, auth)).toBe('pipelines.invalid_request');
    expect(await code('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost'), move_to: { [lead!.id]: proposal!.id } }, auth)).toBe('pipelines.invalid_request');

    const changed = await ok<Pipeline>('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost'), move_to: { [old!.id]: proposal!.id } }, auth);
    expect(changed.version).toBe(2);
    expect(changed.stages.map((s) => s.name)).toEqual(['Lead', 'Proposal', 'Won', 'Lost']);
    expect(changed).not.toHaveProperty('moves');

    // Until the move reaches them, the projects are in the old stage, shown with its last name;
    // naming it again changes nothing, but no other write can enter it.
    const before = await ok<Project>('projects-get', { id: moving[0]!.id }, auth);
    expect(before).toMatchObject({ stage_id: old!.id, stage: 'Old', probability: 20 });
    const same = await ok<Project>('projects-update', { id: moving[0]!.id, stage_id: old!.id, name: 'm0 renamed' }, auth);
    expect(same).toMatchObject({ stage_id: old!.id, stage: 'Old', name: 'm0 renamed' });
    expect(await code('projects-create', { name: 'late', stage_id: old!.id }, auth)).toBe('projects.invalid_stage_id');
    expect(await code('projects-update', { id: staying.id, stage_id: old!.id }, auth)).toBe('projects.invalid_stage_id');
    // One moved by hand meanwhile: the job leaves it where it is.
    const byHand = await ok<Project>('projects-update', { id: moving[1]!.id, stage_id: lead!.id }, auth);
    expect(byHand.stage_id).toBe(lead!.id);

    // A worker dies after its second page (pages of 7): its lease (1 ms here) runs out, another resumes.
    const message = await moveOf(auth.accountId);
    await expect(
      runIndexBuild(message, {
        pageSize: 7,
        leaseMs: 1,
        afterPage: (job) => {
          if (job.position === 2) throw new Error('worker died');
        },
      }),
    ).rejects.toThrow('worker died');
    const half = (await getIndexBuild(auth.accountId, message.build_id))!;
    expect(half).toMatchObject({ status: 'processing', position: 2 });
    expect(half.done).toBeGreaterThan(0);
    expect(half.done).toBeLessThan(N - 1);
    expect(await runIndexBuild(message, { pageSize: 7 })).toBe('completed');
    const done = (await getIndexBuild(auth.accountId, message.build_id))!;
    expect(done).toMatchObject({ status: 'completed', done: N - 1 }); // each once: the one moved by hand not counted
    expect(await runIndexBuild(message)).toBe('completed'); // a message delivered again moves nothing

    expect(await projectsIn(auth, old!.id)).toEqual([]);
    const inProposal = await projectsIn(auth, proposal!.id);
    expect(inProposal.map((x) => x.id).sort()).toEqual(moving.filter((m) => m.id !== byHand.id).map((m) => m.id).sort());
    for (const x of inProposal) {
      expect(x).toMatchObject({ pipeline_id: p.id, stage: 'Proposal', probability: 40, status: 'open' });
      expect(x.stage_times[old!.id]!.visits).toBe(1);
      expect(x.stage_times[proposal!.id]!.visits).toBe(1);
    }
    // The use counts are exact: the old stage holds only the trashed project, Proposal the moved ones.
    const use = await getPipelineUse(auth.accountId, p.id);
    expect(use).toEqual({ n: N + 2, stages: { [old!.id]: 1, [proposal!.id]: N - 1, [lead!.id]: 2 } });

    // Each moved project: its history closed the old visit and opened the new one (actor system) …
    const visits = (await ok<{ items: Visit[] }>('projects-stage-history', { project_id: moving[5]!.id }, auth)).items;
    expect(visits.map((v) => [v.stage_name, v.exited_at === null])).toEqual([['Old', false], ['Proposal', true]]);
    expect(visits[1]!.actor).toEqual({ type: 'system', id: null });
    // … and its events: project.updated and project.stage_changed, once each.
    await worker!.drain();
    type Event = { event: string; actor: unknown; previous_attributes?: Record<string, unknown> };
    for (const m of [moving[0]!, moving[5]!, moving[N - 1]!]) {
      const events = (await ok<{ items: Event[] }>('events-list', { record_id: m.id, limit: 100 }, auth)).items;
      const system = events.filter((e) => (e.actor as { type: string }).type === 'system');
      expect(system.map((e) => e.event).sort()).toEqual(['project.stage_changed', 'project.updated']);
      expect(system.find((e) => e.event === 'project.stage_changed')!.previous_attributes).toEqual({ pipeline_id: p.id, stage_id: old!.id, stage: 'Old', status: 'open' });
    }

    // The trashed project, restored, goes where its stage's projects went.
    const restored = await ok<Project>('projects-restore', { id: trashed.id }, auth);
    expect(restored).toMatchObject({ stage_id: proposal!.id, stage: 'Proposal' });
    expect((await getPipelineUse(auth.accountId, p.id)).stages).toEqual({ [proposal!.id]: N, [lead!.id]: 2 });
  }, 120_000);

  it('moves the projects of a stage whose kind changes, leaving those that entered it after the change', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES }, auth);
    const [lead, , old, won] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'a', stage_id: old!.id }, auth);
    const b = await ok<Project>('projects-create', { name: 'b', stage_id: old!.id }, auth);
    const stages = p.stages.map(({ id, name, kind, probability }) => ({ id, name, kind: id === old!.id ? 'won' : kind, probability }));
    expect(await code('pipelines-update', { id: p.id, stages }, auth)).toBe('pipelines.stage_in_use');
    await ok<Pipeline>('pipelines-update', { id: p.id, stages, move_to: { [old!.id]: won!.id } }, auth);
    // Entered after the change: a won project of the stage, which stays.
    const c = await ok<Project>('projects-create', { name: 'c', stage_id: old!.id }, auth);
    expect(c.status).toBe('completed');
    expect(await runIndexBuild(await moveOf(auth.accountId))).toBe('completed');
    const got = await Promise.all([a, b, c].map((x) => ok<Project>('projects-get', { id: x.id }, auth)));
    expect(got.map((x) => [x.stage_id, x.status])).toEqual([
      [won!.id, 'completed'],
      [won!.id, 'completed'],
      [old!.id, 'completed'],
    ]);
    expect((await getPipelineUse(auth.accountId, p.id)).stages).toEqual({ [won!.id]: 2, [old!.id]: 1 });
    expect(lead).toBeDefined();
  });

  it('writes again the projects of a renamed stage, or one with a new probability or rot_days: their stage, probability and rotting_since follow', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES }, auth);
    const [lead, proposal] = p.stages;
    const inProposal: Project[] = [];
    for (let i = 0; i < 9; i++) inProposal.push(await ok<Project>('projects-create', { name: `p${i}`, stage_id: proposal!.id }, auth));
    const inLead = await ok<Project>('projects-create', { name: 'lead', stage_id: lead!.id }, auth);
    const stages = p.stages.map(({ id, name, kind, probability, rot_days }) => (id === proposal!.id ? { id, name: 'Proposal sent', kind, probability: 60, rot_days: 10 } : { id, name, kind, probability, rot_days }));
    const changed = await ok<Pipeline>('pipelines-update', { id: p.id, stages }, auth);
    expect(changed.version).toBe(2);
    const message = await moveOf(auth.accountId);
    // A project moved out by hand before the job reaches it is left where it went.
    const left = await ok<Project>('projects-update', { id: inProposal[0]!.id, stage_id: lead!.id }, auth);
    expect(left).toMatchObject({ stage_id: lead!.id, stage: 'Lead' });
    expect(await runIndexBuild(message, { pageSize: 4 })).toBe('completed');
    expect((await getIndexBuild(auth.accountId, message.build_id))!).toMatchObject({ status: 'completed', done: 8 });
    for (const x of await projectsIn(auth, proposal!.id)) {
      expect(x).toMatchObject({ stage: 'Proposal sent', probability: 60, status: 'open' });
      expect(Date.parse(String(x.rotting_since)) - Date.parse(String(x.stage_entered_at))).toBe(10 * 86_400_000);
      expect(x.stage_times[proposal!.id]!.visits).toBe(1); // the same visit: nothing entered or left
    }
    expect(await ok<Project>('projects-get', { id: inLead.id }, auth)).toMatchObject({ stage: 'Lead', probability: 0 });
    // The history keeps the name the visit had when it began; the change raised project.updated only.
    const visits = (await ok<{ items: Visit[] }>('projects-stage-history', { project_id: inProposal[3]!.id }, auth)).items;
    expect(visits.map((v) => v.stage_name)).toEqual(['Proposal']);
    await worker!.drain();
    const events = (await ok<{ items: { event: string; record_id?: string }[] }>('events-list', { record_id: inProposal[3]!.id }, auth)).items.map((e) => e.event);
    expect(events).toEqual(['project.created', 'project.stage_changed', 'project.updated'].filter((e) => events.includes(e)));
    expect(events.filter((e) => e === 'project.updated')).toHaveLength(1);
    expect(events.filter((e) => e === 'project.stage_changed')).toHaveLength(1); // its create's, not the refresh's
    expect(await runIndexBuild(message)).toBe('completed'); // delivered again: nothing written twice
    expect((await getIndexBuild(auth.accountId, message.build_id))!.done).toBe(8);
  });

  it('asks move_to for a stage a move still sends projects to, and follows a move onward', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES }, auth);
    const [lead, proposal, old] = p.stages;
    const a = await ok<Project>('projects-create', { name: 'a', stage_id: old!.id }, auth);
    await ok('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost'), move_to: { [old!.id]: proposal!.id } }, auth);
    const first = await moveOf(auth.accountId);
    // Proposal holds nothing yet, but the move sends a project there.
    expect(await code('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Won', 'Lost') }, auth)).toBe('pipelines.stage_in_use');
    await ok('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Won', 'Lost'), move_to: { [proposal!.id]: lead!.id } }, auth);
    expect(await runIndexBuild(first)).toBe('completed');
    expect(await ok<Project>('projects-get', { id: a.id }, auth)).toMatchObject({ stage_id: lead!.id, stage: 'Lead' });
    const second = (await listActiveIndexBuilds()).find((m) => m.account_id === auth.accountId)!;
    expect(await runIndexBuild({ account_id: auth.accountId, build_id: second.build_id })).toBe('completed');
    expect((await getPipelineUse(auth.accountId, p.id)).stages).toEqual({ [lead!.id]: 1 });
  });

  it('does not hold another account’s job behind one account’s move', async () => {
    const a = newAccount();
    const b = newAccount();
    const setUp = async (auth: Auth, n: number) => {
      const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES }, auth);
      for (let i = 0; i < n; i++) await ok('projects-create', { name: `x${i}`, stage_id: p.stages[2]!.id }, auth);
      await ok('pipelines-update', { id: p.id, stages: keep(p.stages, 'Lead', 'Proposal', 'Won', 'Lost'), move_to: { [p.stages[2]!.id]: p.stages[1]!.id } }, auth);
      return { p, message: await moveOf(auth.accountId) };
    };
    const [ja, jb] = [await setUp(a, 12), await setUp(b, 3)];
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const event = (m: { account_id: string; build_id: string }) => ({ Records: [{ messageId: `m-${m.build_id}`, body: JSON.stringify(m) }] }) as unknown as SQSEvent;
    const fn = functionByName('indexBuildWorker')!;
    // A's move holds a worker (waiting after its first page) …
    const busy = asFunction(fn, indexBuildHandler({ pageSize: 5, afterPage: () => opened }))(event(ja.message));
    for (let i = 0; i < 100 && (await getIndexBuild(a.accountId, ja.message.build_id))!.position === 0; i++) await new Promise((r) => setTimeout(r, 50));
    // … while B's runs to its end at once on another.
    const started = Date.now();
    expect(await asFunction(fn, indexBuildHandler())(event(jb.message))).toEqual({ batchItemFailures: [] });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await getIndexBuild(b.accountId, jb.message.build_id))!.status).toBe('completed');
    expect((await getIndexBuild(a.accountId, ja.message.build_id))!.status).toBe('processing');
    open();
    expect(await busy).toEqual({ batchItemFailures: [] });
    expect(await getIndexBuild(a.accountId, ja.message.build_id)).toMatchObject({ status: 'completed', done: 12 });
  }, 60_000);
});
