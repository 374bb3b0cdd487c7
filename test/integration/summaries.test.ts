/**
 * Project summaries (contract §21) and the pipeline board (§19 `pipelines-board`): the counters
 * kept by the changes worker against an oracle counted from projects-list, the stages' current
 * probabilities, the errors, redelivered and interrupted batches, the rebuild, and the reads'
 * bounds (ConsumedCapacity, items read).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamPoller } from '../../local/stream-poller.js';
import { measureCapacity } from '../../shared/db/capacity.js';
import { db } from '../../shared/db/client.js';
import { addToCounters } from '../../shared/db/summaries.js';
import { keys } from '../../shared/db/table.js';
import { toRecordChange } from '../../shared/domain/record-change.js';
import { countChanges, rebuildSummaries } from '../../shared/domain/summaries.js';
import { applyChanges } from '../../shared/stream/changes.js';
import { invoke, newAccount, ok, startTestStreamWorker } from '../helpers/api.js';
import { fileIndexBuildQueue } from '../helpers/stream.js';

type Auth = ReturnType<typeof newAccount>;
interface Stage { id: string; name: string; kind: string; probability: number }
interface Pipeline { id: string; name: string; stages: Stage[]; version: number; is_default: boolean; created_at: string }
type Project = Record<string, unknown> & { id: string; amount: number | null; currency: string; status: string; pipeline_id: string | null; stage_id: string | null; closed_at: string | null };
interface Values { count: number; amount: Record<string, number>; weighted_amount: Record<string, number> }
interface Group extends Values { key: string | null; label: string }
interface Summary { groups: Group[]; total: Values; as_of: string }

const STAGES = [{ name: 'Lead', probability: 10 }, { name: 'Proposal', probability: 33 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
const STATUS_P: Record<string, number> = { open: 0, completed: 100, canceled: 0 };

let worker: StreamPoller;
beforeAll(async () => {
  worker = await startTestStreamWorker();
  await fileIndexBuildQueue(); // a new probability queues the job that writes the stage's projects again (not run here)
});
afterAll(async () => {
  await worker?.stop();
});

const code = async (op: string, body: unknown, auth: Auth) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: (r.body.error?.details ?? []) as { path: string; message: string }[] };
};

async function allProjects(auth: Auth): Promise<Project[]> {
  const out: Project[] = [];
  let cursor = '';
  do {
    const page = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { limit: 100, ...(cursor ? { cursor } : {}) }, auth);
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** x / 100 rounded half up (x ≥ 0 here), exactly. */
const roundHundredths = (x: bigint) => Number((x + 50n) / 100n);

/** The oracle: a group's values counted from the projects one by one. */
function valuesOf(projects: Project[], probabilityOf: (p: Project) => number): Values {
  const sums = new Map<string, bigint>();
  const weighted = new Map<string, bigint>();
  for (const p of projects) {
    if (p.amount === null) continue;
    sums.set(p.currency, (sums.get(p.currency) ?? 0n) + BigInt(p.amount));
    weighted.set(p.currency, (weighted.get(p.currency) ?? 0n) + BigInt(p.amount) * BigInt(probabilityOf(p)));
  }
  const currencies = [...sums.keys()].sort();
  return { count: projects.length, amount: Object.fromEntries(currencies.map((c) => [c, Number(sums.get(c))])), weighted_amount: Object.fromEntries(currencies.map((c) => [c, roundHundredths(weighted.get(c)!)])) };
}

async function oracle(auth: Auth, body: { group_by: string; pipeline_id?: string; closed_from?: string; closed_to?: string }): Promise<Omit<Summary, 'as_of'>> {
  const [projects, { items: pipelines }] = await Promise.all([allProjects(auth), ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)]);
  const stageP = new Map(pipelines.flatMap((p) => p.stages.map((s) => [s.id, s.probability] as const)));
  const prob = (p: Project) => (p.pipeline_id && p.stage_id ? stageP.get(p.stage_id)! : STATUS_P[p.status]!);
  const scoped = body.pipeline_id ? projects.filter((p) => p.pipeline_id === body.pipeline_id) : projects;
  let groups: { key: string | null; label: string; of: Project[] }[];
  if (body.group_by === 'stage') groups = pipelines.find((p) => p.id === body.pipeline_id)!.stages.map((s) => ({ key: s.id, label: s.name, of: scoped.filter((p) => p.stage_id === s.id) }));
  else if (body.group_by === 'pipeline') groups = [...pipelines.map((pl) => ({ key: pl.id as string | null, label: pl.name, of: projects.filter((p) => p.pipeline_id === pl.id) })), { key: null, label: 'No pipeline', of: projects.filter((p) => !p.pipeline_id) }];
  else if (body.group_by === 'status') groups = ['open', 'completed', 'canceled'].map((s) => ({ key: s, label: s, of: scoped.filter((p) => p.status === s) }));
  else {
    const months: string[] = [];
    for (let m = body.closed_from!; m <= body.closed_to!; ) {
      months.push(m);
      const [y, mm] = m.split('-').map(Number) as [number, number];
      m = mm === 12 ? `${y + 1}-01` : `${y}-${String(mm + 1).padStart(2, '0')}`;
    }
    groups = months.map((m) => ({ key: m, label: m, of: scoped.filter((p) => p.status !== 'open' && p.closed_at?.slice(0, 7) === m) }));
  }
  return { groups: groups.map((g) => ({ key: g.key, label: g.label, ...valuesOf(g.of, prob) })), total: valuesOf(groups.flatMap((g) => g.of), prob) };
}

/** Polls until the summary equals the oracle (the counters follow the stream: wait on it, never a fixed sleep). */
async function expectSummary(auth: Auth, body: { group_by: string; pipeline_id?: string; closed_from?: string; closed_to?: string }, timeoutMs = 60_000): Promise<Summary> {
  const deadline = Date.now() + timeoutMs;
  const expected = await oracle(auth, body);
  for (;;) {
    const got = await ok<Summary>('projects-summary', body, auth);
    const { as_of: _a, ...rest } = got;
    if (JSON.stringify(rest) === JSON.stringify(expected) || Date.now() > deadline) {
      expect(rest).toEqual(expected);
      return got;
    }
    await worker.drain();
  }
}

const thisMonth = () => new Date().toISOString().slice(0, 7);
const pipelineOf = (auth: Auth, name = 'Sales', stages: unknown[] = STAGES) => ok<Pipeline>('pipelines-create', { name, stages }, auth);

/**
 * Creates the projects in batches and places them (stage_id) with batch updates of 25 (their
 * transactions all add to the pipeline's use item: a batch of 100 may outlast the function's
 * timeout on a loaded machine).
 */
async function createPlaced(auth: Auth, items: ({ stage_id: string } & Record<string, unknown>)[]): Promise<void> {
  for (let at = 0; at < items.length; at += 25) {
    const chunk = items.slice(at, at + 25);
    const made = await ok<{ results: { ok: boolean; record: { id: string } }[] }>('projects-batch-create', { items: chunk.map(({ stage_id: _, ...rest }) => rest) }, auth);
    expect(made.results.every((r) => r.ok)).toBe(true);
    const placed = await ok<{ results: { ok: boolean }[] }>('projects-batch-update', { items: made.results.map((r, i) => ({ id: r.record.id, stage_id: chunk[i]!.stage_id })) }, auth);
    expect(placed.results.filter((r) => !r.ok)).toEqual([]);
  }
}

describe('projects-summary', () => {
  it('counts and sums by stage, pipeline, status and close month, as counting the projects one by one; weighted from the current probabilities', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const other = await pipelineOf(auth, 'Renewals');
    const [lead, proposal, won, lost] = p.stages;
    await ok('projects-create', { name: 'a', stage_id: lead!.id, amount: 1005, currency: 'USD' }, auth);
    await ok('projects-create', { name: 'b', stage_id: proposal!.id, amount: 1515, currency: 'USD' }, auth);
    await ok('projects-create', { name: 'c', stage_id: proposal!.id, amount: 2000, currency: 'EUR' }, auth);
    await ok('projects-create', { name: 'd', stage_id: proposal!.id, amount: null }, auth);
    await ok('projects-create', { name: 'e', stage_id: won!.id, amount: 700, currency: '' }, auth);
    await ok('projects-create', { name: 'f', stage_id: lost!.id, amount: 0, currency: 'USD' }, auth);
    await ok('projects-create', { name: 'g', pipeline_id: other.id, amount: 999, currency: 'USD' }, auth);
    await ok('projects-create', { name: 'h', status: 'completed', amount: 250, currency: 'GBP' }, auth);
    await ok('projects-create', { name: 'i', status: 'canceled', amount: 125, currency: 'GBP' }, auth);
    const moved = await ok<Project>('projects-create', { name: 'j', amount: 10, currency: 'USD' }, auth);
    await ok('projects-update', { id: moved.id, stage_id: proposal!.id, amount: 11 }, auth);
    const trashed = await ok<Project>('projects-create', { name: 'k', stage_id: lead!.id, amount: 5000, currency: 'USD' }, auth);
    await ok('projects-delete', { id: trashed.id }, auth);
    await worker.drain();

    const byStage = await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
    expect(byStage.groups.map((g) => g.key)).toEqual(p.stages.map((s) => s.id));
    // Proposal at 33%: USD (1515 + 11) × 0.33 = 503.58 → 504; EUR 2000 × 0.33 = 660
    expect(byStage.groups[1]).toMatchObject({ count: 4, amount: { EUR: 2000, USD: 1526 }, weighted_amount: { EUR: 660, USD: 504 } });
    expect(byStage.groups[3]).toMatchObject({ count: 1, amount: { USD: 0 }, weighted_amount: { USD: 0 } });
    expect(Date.parse(byStage.as_of)).toBeGreaterThan(Date.now() - 120_000);
    const byPipeline = await expectSummary(auth, { group_by: 'pipeline' });
    expect(byPipeline.groups.map((g) => g.key)).toEqual([p.id, other.id, null]);
    await expectSummary(auth, { group_by: 'status' });
    await expectSummary(auth, { group_by: 'status', pipeline_id: p.id });
    const months = await expectSummary(auth, { group_by: 'close_month', closed_from: '2026-01', closed_to: thisMonth() });
    expect(months.groups.at(-1)!.count).toBe(4);
    await expectSummary(auth, { group_by: 'close_month', pipeline_id: p.id, closed_from: '2026-01', closed_to: thisMonth() });

    // the trash counts nowhere; a restore counts again
    await ok('projects-restore', { id: trashed.id }, auth);
    await worker.drain();
    expect((await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id })).groups[0]!.count).toBe(2);

    // a stage's new probability applies at once, without any write to the projects
    await ok('pipelines-update', { id: p.id, stages: p.stages.map((s) => (s.id === proposal!.id ? { ...s, probability: 50 } : s)) }, auth);
    const now = await ok<Summary>('projects-summary', { group_by: 'stage', pipeline_id: p.id }, auth);
    expect(now.groups[1]!.weighted_amount).toEqual({ EUR: 1000, USD: 763 });
    await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
  }, 180_000);

  it('answers every group even when empty, and refuses bad requests with details', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const empty = await ok<Summary>('projects-summary', { group_by: 'stage', pipeline_id: p.id }, auth);
    expect(empty.groups.map((g) => [g.label, g.count, g.amount])).toEqual(p.stages.map((s) => [s.name, 0, {}]));
    expect(empty.total).toEqual({ count: 0, amount: {}, weighted_amount: {} });
    const months = await ok<Summary>('projects-summary', { group_by: 'close_month' }, auth);
    expect(months.groups).toHaveLength(12);
    expect(months.groups.at(-1)!.key).toBe(thisMonth());
    expect((await ok<Summary>('projects-summary', { group_by: 'status' }, auth)).groups.map((g) => g.key)).toEqual(['open', 'completed', 'canceled']);

    const bad = (body: unknown) => code('projects-summary', body, auth);
    expect(await bad({ group_by: 'stage' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'pipeline_id' }] });
    expect(await bad({ group_by: 'owner', pipeline_id: p.id })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'pipeline_id', message: 'does not apply to group_by owner' }] });
    expect(await bad({ group_by: 'close_month', closed_from: '2020-01', closed_to: '2023-01' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'closed_from' }] });
    expect(await bad({ group_by: 'close_month', closed_from: '2020-01', closed_to: '2022-12' })).toMatchObject({ status: 200 });
    expect(await bad({ group_by: 'close_month', closed_from: '2024-05', closed_to: '2024-04' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'closed_to' }] });
    expect(await bad({ group_by: 'close_month', closed_from: '2024-13' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'closed_from' }] });
    expect(await bad({ group_by: 'status', closed_from: '2024-01' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'closed_from' }] });
    expect(await bad({ group_by: 'pipeline', pipeline_id: p.id })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'pipeline_id' }] });
    expect(await bad({ group_by: 'day' })).toMatchObject({ status: 400, code: 'projects.invalid_request', details: [{ path: 'group_by' }] });
    expect(await bad({ group_by: 'status', extra: 1 })).toMatchObject({ status: 400, code: 'projects.invalid_request' });
    expect(await bad({ group_by: 'stage', pipeline_id: randomUUID() })).toMatchObject({ status: 400, code: 'projects.invalid_pipeline_id', details: [{ path: 'pipeline_id' }] });
    expect(await bad({ group_by: 'stage', pipeline_id: 'nope' })).toMatchObject({ status: 400 });
    // another account's pipeline is unknown here
    expect(await code('projects-summary', { group_by: 'stage', pipeline_id: p.id }, newAccount())).toMatchObject({ status: 400, code: 'projects.invalid_pipeline_id' });
  });

  it('reads at most 10 RCU for a 30-stage pipeline\'s stage summary', async () => {
    const auth = newAccount();
    const stages = [...Array.from({ length: 28 }, (_, i) => ({ name: `Open stage number ${i + 1}`, probability: i * 3 })), { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
    const p = await pipelineOf(auth, 'Thirty', stages);
    const items = p.stages.flatMap((s, i) => [
      { name: `p${i}`, stage_id: s.id, amount: 1000 + i, currency: ['USD', 'EUR', 'GBP'][i % 3] },
      { name: `q${i}`, stage_id: s.id, amount: 7 * i, currency: ['JPY', 'CHF'][i % 2] },
    ]);
    await createPlaced(auth, items);
    await worker.drain();
    await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
    const { usage } = await measureCapacity(() => ok<Summary>('projects-summary', { group_by: 'stage', pipeline_id: p.id }, auth));
    // the pipeline item and one Query of its 30 counters (the rate limiter's items are the control table's too: counted here)
    expect(usage.rcu).toBeGreaterThan(0);
    expect(usage.rcu).toBeLessThanOrEqual(10);
  }, 180_000);
});

describe('the counters under redelivery, interruption and concurrency', () => {
  /** A stream record of a project item (as DynamoDB Streams gives it). */
  function streamRecord(accountId: string, eventName: 'INSERT' | 'MODIFY' | 'REMOVE', oldImage?: Record<string, unknown>, newImage?: Record<string, unknown>): DynamoDBRecord {
    const item = (newImage ?? oldImage)!;
    const k = keys.record(accountId, 'project', String(item.id));
    const image = (r?: Record<string, unknown>) => r && (marshall({ ...k, entity: 'project', account_id: accountId, ...r }, { removeUndefinedValues: true }) as never);
    return {
      eventID: randomUUID(),
      eventName,
      dynamodb: { Keys: marshall(k) as never, ApproximateCreationDateTime: Date.now() / 1000, ...(oldImage ? { OldImage: image(oldImage) } : {}), ...(newImage ? { NewImage: image(newImage) } : {}) },
    };
  }
  const project = (status: string, amount: number | null, currency = 'USD') => ({ id: randomUUID(), name: 'x', status, amount, currency, pipeline_id: null, stage_id: null, closed_at: status === 'open' ? null : new Date().toISOString() });
  const statusSummary = (auth: Auth) => ok<Summary>('projects-summary', { group_by: 'status' }, auth);

  it('counts a redelivered batch once (applyChanges twice, and overlapping batches)', async () => {
    const auth = newAccount();
    const a = project('open', 100);
    const b = project('completed', 200);
    const a2 = { ...a, amount: 150, currency: 'EUR' };
    const batch = [streamRecord(auth.accountId, 'INSERT', undefined, a), streamRecord(auth.accountId, 'INSERT', undefined, b), streamRecord(auth.accountId, 'MODIFY', a, a2)];
    const errors: unknown[] = [];
    expect(await applyChanges(batch, auth.accountId, (m, d) => errors.push([m, d]))).toBeUndefined();
    const once = await statusSummary(auth);
    expect(await applyChanges(batch, auth.accountId, (m, d) => errors.push([m, d]))).toBeUndefined();
    expect(errors).toEqual([]);
    const twice = await statusSummary(auth);
    expect(twice).toEqual(once);
    expect(once.groups.map((g) => [g.key, g.count, g.amount])).toEqual([['open', 1, { EUR: 150 }], ['completed', 1, { USD: 200 }], ['canceled', 0, {}]]);
    // a batch that overlaps the last (its first change already counted) counts only the new one
    const removed = streamRecord(auth.accountId, 'REMOVE', b, undefined);
    const r = await countChanges([batch[2]!, removed].map((x) => toRecordChange(x)));
    expect(r).toMatchObject({ counted: 1, skipped: 1 });
    expect((await statusSummary(auth)).groups.map((g) => g.count)).toEqual([1, 0, 0]);
    // sums past 2^53 are kept exactly (BigInt) and answered as the nearest JSON number, never a failure
    const big = [project('open', Number.MAX_SAFE_INTEGER, 'JPY'), project('open', Number.MAX_SAFE_INTEGER, 'JPY')];
    await countChanges(big.map((x) => toRecordChange(streamRecord(auth.accountId, 'INSERT', undefined, x))));
    expect((await statusSummary(auth)).groups[0]).toMatchObject({ count: 3, amount: { EUR: 150, JPY: Number(2n * BigInt(Number.MAX_SAFE_INTEGER)) } });
    // these changes are of no stored record: the rebuild takes every count back, the big sums exactly
    const drift = await rebuildSummaries(auth.accountId);
    expect(drift).toContainEqual(expect.objectContaining({ dimension: 'status', group: 'open', n: -3, sums: { 'status:open|EUR': -150n, 'status:open|JPY': -2n * BigInt(Number.MAX_SAFE_INTEGER) } }));
    expect((await statusSummary(auth)).total).toEqual({ count: 0, amount: {}, weighted_amount: {} });
  });

  it('resumes an interrupted batch: the transactions written before the failure are not counted again', async () => {
    const auth = newAccount();
    // 150 creates in 30 statuses × currencies: several transactions
    const created = Array.from({ length: 150 }, (_, i) => project(['open', 'completed', 'canceled'][i % 3]!, i * 10, `C${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + (i % 7))}`));
    const batch = created.map((p) => toRecordChange(streamRecord(auth.accountId, 'INSERT', undefined, p)));
    const client = db();
    const send = client.send.bind(client);
    let transactions = 0;
    const spy = vi.spyOn(client, 'send').mockImplementation(((command: { constructor: { name: string } }, ...rest: unknown[]) => {
      if (command.constructor.name === 'TransactWriteCommand' && ++transactions === 2) return Promise.reject(new Error('injected crash'));
      return (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
    }) as never);
    try {
      await expect(countChanges(batch)).rejects.toThrow('injected crash');
    } finally {
      spy.mockRestore();
    }
    expect(transactions).toBe(2);
    const partial = await statusSummary(auth);
    expect(partial.total.count).toBeGreaterThan(0);
    expect(partial.total.count).toBeLessThan(150);
    const retried = await countChanges(batch);
    expect(retried.skipped).toBe(partial.total.count);
    expect(retried.counted).toBe(150 - partial.total.count);
    const done = await statusSummary(auth);
    expect(done.total.count).toBe(150);
    const sum = created.reduce((n, p) => n + p.amount!, 0);
    expect(Object.values(done.total.amount).reduce((n, x) => n + x, 0)).toBe(sum);
  });

  it('property: concurrent writers (creates, amount, currency, stage moves, status, leaving and entering, delete, restore) end at the oracle\'s totals, and rebuild finds 0 drift', async () => {
    type Op =
      | { kind: 'create'; stage: number | null; amount: number | null; currency: string; status: string }
      | { kind: 'amount'; target: number; amount: number | null; currency: string }
      | { kind: 'move'; target: number; stage: number }
      | { kind: 'status'; target: number; status: string }
      | { kind: 'leave'; target: number }
      | { kind: 'delete'; target: number }
      | { kind: 'restore'; target: number };
    const currency = fc.constantFrom('USD', 'EUR', '');
    const amount = fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null });
    const status = fc.constantFrom('open', 'completed', 'canceled');
    const target = fc.nat({ max: 30 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), stage: fc.option(fc.nat({ max: 3 }), { nil: null }), amount, currency, status }),
      fc.record({ kind: fc.constant('amount' as const), target, amount, currency }),
      fc.record({ kind: fc.constant('move' as const), target, stage: fc.nat({ max: 3 }) }),
      fc.record({ kind: fc.constant('status' as const), target, status }),
      fc.record({ kind: fc.constant('leave' as const), target }),
      fc.record({ kind: fc.constant('delete' as const), target }),
      fc.record({ kind: fc.constant('restore' as const), target }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 4, maxLength: 12 }), { minLength: 3, maxLength: 3 }), async (writers) => {
        const auth = newAccount();
        const p = await pipelineOf(auth);
        const ids: string[] = [];
        const trashed: string[] = [];
        const run = async (o: Op) => {
          const id = ids.length ? ids[('target' in o ? o.target : 0) % ids.length]! : undefined;
          switch (o.kind) {
            case 'create': {
              const body = o.stage === null ? { status: o.status } : { stage_id: p.stages[o.stage]!.id };
              ids.push((await ok<Project>('projects-create', { name: 'w', amount: o.amount, currency: o.currency, ...body }, auth)).id);
              return;
            }
            case 'restore': {
              const t = trashed.shift();
              if (t) await invoke('projects-restore', { id: t }, auth);
              return;
            }
            default:
              if (!id) return;
              if (o.kind === 'amount') await invoke('projects-update', { id, amount: o.amount, currency: o.currency }, auth);
              else if (o.kind === 'move') await invoke('projects-update', { id, stage_id: p.stages[o.stage]!.id }, auth);
              else if (o.kind === 'status') await invoke('projects-update', { id, status: o.status }, auth);
              else if (o.kind === 'leave') await invoke('projects-update', { id, pipeline_id: null }, auth);
              else if ((await invoke('projects-delete', { id }, auth)).status === 200) trashed.push(id);
          }
        };
        await Promise.all(writers.map(async (ops) => { for (const o of ops) await run(o); }));
        await worker.drain();
        await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
        await expectSummary(auth, { group_by: 'pipeline' });
        await expectSummary(auth, { group_by: 'status' });
        await expectSummary(auth, { group_by: 'close_month', closed_from: '2026-01', closed_to: thisMonth() });
        expect(await rebuildSummaries(auth.accountId)).toEqual([]);
      }),
      { numRuns: 4 },
    );
  }, 300_000);

  it('rebuild reports 0 drift after a workload, then finds and corrects an injected drift', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    for (let i = 0; i < 6; i++) await ok('projects-create', { name: `r${i}`, stage_id: p.stages[i % 4]!.id, amount: 100 * i, currency: 'USD' }, auth);
    await worker.drain();
    const before = await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
    const stage = p.stages[1]!.id;
    await addToCounters([{ accountId: auth.accountId, dimension: `stage#${p.id}`, group: stage, n: 3, sums: { [`${stage}|USD`]: 12_345n }, counts: { [`${stage}|USD`]: 1 } }]);
    expect((await ok<Summary>('projects-summary', { group_by: 'stage', pipeline_id: p.id }, auth)).groups[1]!.count).toBe(before.groups[1]!.count + 3);
    // the command (npm run rebuild-summaries) prints what it corrected, then 0 drift
    const command = async () => {
      const args = ['tsx', 'scripts/rebuild-summaries.ts', '--table', process.env.TABLE_NAME!, '--endpoint', process.env.DYNAMODB_ENDPOINT!, '--account', auth.accountId];
      return (await promisify(execFile)('npx', args, { env: process.env, timeout: 60_000 })).stdout;
    };
    const printed = await command();
    expect(printed).toContain(`${auth.accountId} stage#${p.id} ${stage}: n -3, ${stage}|USD -12345, amounts of ${stage}|USD -1`);
    expect(printed).toContain('1 counters corrected in 1 accounts');
    await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
    expect(await rebuildSummaries(auth.accountId)).toEqual([]);
    expect(await command()).toContain('0 drift (1 accounts)');
  }, 180_000);
});

describe('pipelines-board', () => {
  interface Column extends Values { stage: Stage; items: Project[]; next_cursor: string }
  interface Board { pipeline: Pipeline; columns: Column[] }

  it('gives every stage in order with its totals and newest projects; next_cursor continues the column through projects-list', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal] = p.stages;
    const leads: Project[] = [];
    for (let i = 0; i < 7; i++) leads.push(await ok<Project>('projects-create', { name: `l${i}`, stage_id: lead!.id, amount: 100 + i, currency: 'USD' }, auth));
    await ok('projects-create', { name: 'prop', stage_id: proposal!.id, amount: 300, currency: 'EUR' }, auth);
    await worker.drain();
    await expectSummary(auth, { group_by: 'stage', pipeline_id: p.id });
    const board = await ok<Board>('pipelines-board', { pipeline_id: p.id, limit: 3 }, auth);
    expect(board.pipeline).toEqual(await ok('pipelines-get', { id: p.id }, auth));
    expect(board.columns.map((c) => c.stage.id)).toEqual(p.stages.map((s) => s.id));
    const summary = await ok<Summary>('projects-summary', { group_by: 'stage', pipeline_id: p.id }, auth);
    expect(board.columns.map(({ count, amount, weighted_amount }) => ({ count, amount, weighted_amount }))).toEqual(summary.groups.map(({ count, amount, weighted_amount }) => ({ count, amount, weighted_amount })));
    const first = board.columns[0]!;
    const newest = [...leads].reverse();
    expect(first.items.map((x) => x.id)).toEqual(newest.slice(0, 3).map((x) => x.id));
    const filter = { field: 'stage_id', op: 'eq', value: lead!.id };
    expect(first.items).toEqual((await ok<{ items: Project[] }>('projects-list', { filter, limit: 3 }, auth)).items);
    // the column continues through projects-list with the stage filter
    const rest: Project[] = [];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { filter, limit: 3, cursor }, auth);
      rest.push(...page.items);
      cursor = page.next_cursor;
    }
    expect([...first.items, ...rest].map((x) => x.id)).toEqual(newest.map((x) => x.id));
    expect(board.columns[1]!.items.map((x) => x.name)).toEqual(['prop']);
    expect(board.columns[1]!.next_cursor).toBe('');
    expect(board.columns[2]).toMatchObject({ count: 0, amount: {}, items: [], next_cursor: '' });
    // the default limit, errors
    expect((await ok<Board>('pipelines-board', { pipeline_id: p.id }, auth)).columns[0]!.items).toHaveLength(7);
    expect(await code('pipelines-board', { pipeline_id: randomUUID() }, auth)).toMatchObject({ status: 404, code: 'pipelines.not_found' });
    expect(await code('pipelines-board', { pipeline_id: 'x' }, auth)).toMatchObject({ status: 400, code: 'pipelines.invalid_id' });
    expect(await code('pipelines-board', { pipeline_id: p.id, limit: 26 }, auth)).toMatchObject({ status: 400, code: 'pipelines.invalid_request', details: [{ path: 'limit' }] });
    expect(await code('pipelines-board', {}, auth)).toMatchObject({ status: 400, code: 'pipelines.invalid_request' });
  }, 180_000);

  it('reads at most 30 + 30 × (limit + 1) items for 30 stages, the same at two sizes; each column as projects-list pages it', async () => {
    const auth = newAccount();
    const stages = [...Array.from({ length: 28 }, (_, i) => ({ name: `S${i}`, probability: i * 3 })), { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
    const p = await pipelineOf(auth, 'Thirty', stages);
    const limit = 2;
    const reads: number[] = [];
    let made = 0;
    for (const size of [30 * (limit + 1), 30 * (limit + 1) * 2]) {
      const items = Array.from({ length: size - made }, (_, k) => made + k).map((n) => ({ name: `b${n}`, stage_id: p.stages[n % 30]!.id, amount: n, currency: 'USD' }));
      await createPlaced(auth, items);
      made = size;
      await worker.drain();
      const { result, usage } = await measureCapacity(() => ok<Board>('pipelines-board', { pipeline_id: p.id, limit }, auth));
      expect(result.columns.map((c) => c.count)).toEqual(p.stages.map(() => size / 30));
      expect(result.columns.every((c) => c.items.length === limit && c.next_cursor !== '')).toBe(true);
      // the pipeline, its stage counters (one Query), the account's META item, and per column one
      // Query of `limit` records (GSI2): 32 + 30 × limit at most, under the contract's bound.
      expect(usage.itemsRead).toBeLessThanOrEqual(32 + 30 * limit);
      expect(usage.itemsRead).toBeLessThanOrEqual(30 + 30 * (limit + 1));
      reads.push(usage.itemsRead);
      // a column is projects-list's first page of its stage, and its cursor goes on from there
      const column = result.columns[7]!;
      const filter = { field: 'stage_id', op: 'eq', value: column.stage.id };
      const listed = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { filter, limit: size / 30 }, auth);
      expect(column.items).toEqual(listed.items.slice(0, limit));
      const rest = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { filter, limit: size / 30, cursor: column.next_cursor }, auth);
      expect(rest).toEqual({ items: listed.items.slice(limit), next_cursor: '' });
    }
    expect(reads[1]).toBe(reads[0]);
  }, 300_000);

  it('decides whether a column has more from its stage count when it shows exactly limit projects', async () => {
    const auth = newAccount();
    const p = await pipelineOf(auth);
    const [lead, proposal] = p.stages;
    await createPlaced(auth, [
      ...Array.from({ length: 3 }, (_, i) => ({ name: `l${i}`, stage_id: lead!.id })),
      ...Array.from({ length: 4 }, (_, i) => ({ name: `p${i}`, stage_id: proposal!.id })),
    ]);
    await worker.drain();
    const board = await ok<Board>('pipelines-board', { pipeline_id: p.id, limit: 3 }, auth);
    expect(board.columns.slice(0, 2).map((c) => [c.count, c.items.length, c.next_cursor !== ''])).toEqual([
      [3, 3, false],
      [4, 3, true],
    ]);
    const filter = { field: 'stage_id', op: 'eq', value: proposal!.id };
    const listed = await ok<{ items: Project[] }>('projects-list', { filter, limit: 4 }, auth);
    expect(board.columns[1]!.items).toEqual(listed.items.slice(0, 3));
    const rest = await ok<{ items: Project[]; next_cursor: string }>('projects-list', { filter, limit: 3, cursor: board.columns[1]!.next_cursor }, auth);
    expect(rest).toEqual({ items: listed.items.slice(3), next_cursor: '' });
  }, 120_000);
});
