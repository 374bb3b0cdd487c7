/**
 * Every path places projects (contract §19 "Imports and exports of projects carry pipeline_id and
 * stage_id; an import row may name the stage by `stage` within its `pipeline_id`"): an import of
 * projects by stage name (and the row error of an unknown one), an export's columns, and the
 * exported file imported again into the same stages.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportHandler } from '../../functions/exports/worker.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalExports, startLocalExports } from '../../local/exports.js';
import { asFunction } from '../../local/iam.js';
import { type LocalImports, startLocalImports } from '../../local/imports.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { getPipelineUse } from '../../shared/db/pipelines.js';
import { newAccount, ok } from '../helpers/api.js';

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
interface Stage { id: string; name: string; kind: string }
interface Pipeline { id: string; name: string; stages: Stage[] }
interface Job extends Rec { status: string; created_count: number; error_count: number; download_url: string | null }

let queue: LocalQueue;
let imports: LocalImports;
let exportsLocal: LocalExports;
beforeAll(async () => {
  queue = await startLocalQueue('crm-pipeline-imports');
  imports = await startLocalImports(queue.endpoint, { visibilityTimeoutSeconds: 1 });
  exportsLocal = await startLocalExports(queue.endpoint, { handler: (event) => asFunction(functionByName('exportWorker')!, exportHandler())(event), visibilityTimeoutSeconds: 1 });
});
afterAll(async () => {
  await exportsLocal?.stop();
  await imports?.stop();
  await queue?.stop();
});

async function finished<T extends { status: string }>(op: string, auth: Auth, id: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await ok<T>(op, { id }, auth);
    if (['completed', 'failed', 'canceled'].includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`${op} ${id} still ${r.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

const importCsv = async (auth: Auth, csv: string, mode = 'create') => finished<Job>('imports-get', auth, (await ok<Job>('imports-create', { object_type: 'projects', mode, csv }, auth)).id);
const projects = async (auth: Auth) => (await ok<{ items: Rec[] }>('projects-list', { limit: 100 }, auth)).items;

describe('projects in pipelines through batches, imports and exports', () => {
  it('places projects by batch create and batch update (each item as projects-create / -update, the valid ones landing)', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: [{ name: 'Lead' }, { name: 'Proposal' }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }] }, auth);
    const [lead, proposal, won] = p.stages;
    type Results = { results: Array<{ ok: boolean; action?: string; record?: Rec; error?: { code: string } }> };
    const made = await ok<Results>('projects-batch-create', { items: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd', stage_id: lead!.id, amount: 500, currency: 'USD' }, { name: 'e', pipeline_id: p.id }, { name: 'f', stage_id: '00000000-0000-4000-8000-000000000000' }] }, auth);
    expect(made.results.map((r) => [r.ok, r.action ?? r.error?.code])).toEqual([
      [true, 'created'],
      [true, 'created'],
      [true, 'created'],
      [true, 'created'],
      [true, 'created'],
      [false, 'projects.invalid_stage_id'],
    ]);
    expect(made.results[3]!.record).toMatchObject({ pipeline_id: p.id, stage_id: lead!.id, stage: 'Lead', status: 'open', probability: 0 });
    expect(made.results[4]!.record).toMatchObject({ pipeline_id: p.id, stage_id: lead!.id }); // the pipeline's first open stage
    const [a, b, c, d, e] = made.results.map((r) => r.record!);
    expect(await getPipelineUse(auth.accountId, p.id)).toEqual({ n: 2, stages: { [lead!.id]: 2 } });
    expect((await ok<{ items: Rec[] }>('projects-stage-history', { project_id: d!.id }, auth)).items).toEqual([expect.objectContaining({ stage_id: lead!.id, stage_name: 'Lead', exited_at: null })]);
    await ok('projects-batch-delete', { ids: [d!.id, e!.id] }, auth);
    const placed = await ok<Results>('projects-batch-update', { items: [{ id: a!.id, stage_id: proposal!.id }, { id: b!.id, pipeline_id: p.id, status: 'completed' }, { id: c!.id, stage_id: '00000000-0000-4000-8000-000000000000' }] }, auth);
    expect(placed.results.map((r) => [r.ok, r.action ?? r.error?.code])).toEqual([
      [true, 'updated'],
      [true, 'updated'],
      [false, 'projects.invalid_stage_id'],
    ]);
    expect(placed.results[0]!.record).toMatchObject({ pipeline_id: p.id, stage_id: proposal!.id, stage: 'Proposal' });
    expect(placed.results[1]!.record).toMatchObject({ pipeline_id: p.id, stage_id: won!.id, stage: 'Won', status: 'completed' });
    // The two batch-created ones, trashed, still count (contract §19: trashed ones included).
    expect(await getPipelineUse(auth.accountId, p.id)).toEqual({ n: 4, stages: { [lead!.id]: 2, [proposal!.id]: 1, [won!.id]: 1 } });
    const visits = (await ok<{ items: Rec[] }>('projects-stage-history', { project_id: a!.id }, auth)).items;
    expect(visits).toEqual([expect.objectContaining({ stage_id: proposal!.id, exited_at: null })]);
  });

  it('imports projects into stages named by `stage` within their pipeline_id; an unknown name is the row’s invalid_value', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: [{ name: 'Lead' }, { name: 'Négociation', probability: 60 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }] }, auth);
    const [lead, nego, won] = p.stages;
    const csv = [
      'Name,Pipeline ID,Stage,Amount,Currency',
      `A,${p.id},NEGOCIATION,1000,USD`,
      `B,${p.id},Nope,5,USD`,
      'C,,free text,,',
      `D,${p.id},,,`,
      `E,${p.id},won,700,EUR`,
    ].join('\n');
    const job = await importCsv(auth, csv);
    expect(job).toMatchObject({ status: 'completed', created_count: 4, error_count: 1 });
    const errors = (await ok<{ items: Rec[] }>('imports-errors', { import_id: job.id }, auth)).items;
    expect(errors).toEqual([expect.objectContaining({ row_number: 3, column: 'Stage', code: 'invalid_value', value: 'Nope' })]);
    expect(String(errors[0]!.message)).toContain('Sales');

    const byName = new Map((await projects(auth)).map((x) => [x.name, x]));
    expect(byName.get('A')).toMatchObject({ pipeline_id: p.id, stage_id: nego!.id, stage: 'Négociation', status: 'open', probability: 60 });
    expect(byName.get('C')).toMatchObject({ pipeline_id: null, stage_id: null, stage: 'free text' });
    expect(byName.get('D')).toMatchObject({ pipeline_id: p.id, stage_id: lead!.id, stage: 'Lead' });
    expect(byName.get('E')).toMatchObject({ pipeline_id: p.id, stage_id: won!.id, status: 'completed', probability: 100 });
    expect(byName.has('B')).toBe(false);
    // Placed as a create places: the history's first visit (actor the import), the use counts.
    const visits = (await ok<{ items: Rec[] }>('projects-stage-history', { project_id: byName.get('A')!.id }, auth)).items;
    expect(visits).toEqual([expect.objectContaining({ stage_id: nego!.id, stage_name: 'Négociation', exited_at: null, actor: { type: 'import', id: job.id } })]);
    expect(await getPipelineUse(auth.accountId, p.id)).toEqual({ n: 3, stages: { [nego!.id]: 1, [lead!.id]: 1, [won!.id]: 1 } });
  }, 60_000);

  it('exports pipeline_id and stage_id; the exported file imports again into the same stages', async () => {
    const auth = newAccount();
    const p = await ok<Pipeline>('pipelines-create', { name: 'Sales', stages: [{ name: 'Lead' }, { name: 'Proposal', probability: 40 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }] }, auth);
    const [, proposal, , lost] = p.stages;
    const a = await ok<Rec>('projects-create', { name: 'A', stage_id: proposal!.id, amount: 100, currency: 'USD' }, auth);
    const b = await ok<Rec>('projects-create', { name: 'B', stage_id: lost!.id }, auth);
    const c = await ok<Rec>('projects-create', { name: 'C', stage: 'elsewhere' }, auth);
    const exported = await finished<Job>('exports-get', auth, (await ok<Job>('exports-create', { object_type: 'projects' }, auth)).id);
    expect(exported.status).toBe('completed');
    const text = Buffer.from(await (await fetch(exported.download_url!)).arrayBuffer()).toString('utf8');
    const rows = parse(text, { bom: true }) as string[][];
    const header = rows[0]!;
    expect(header).toEqual(expect.arrayContaining(['stage', 'status', 'pipeline_id', 'stage_id']));
    const records = rows.slice(1).map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]!])));
    const byId = new Map(records.map((r) => [r.id, r]));
    expect(byId.get(a.id)).toMatchObject({ pipeline_id: p.id, stage_id: proposal!.id, stage: 'Proposal', status: 'open' });
    expect(byId.get(b.id)).toMatchObject({ pipeline_id: p.id, stage_id: lost!.id, stage: 'Lost', status: 'canceled' });
    expect(byId.get(c.id)).toMatchObject({ pipeline_id: '', stage_id: '', stage: 'elsewhere' });

    // Imported again (its stage cell left out where stage_id decides): copies in the same places.
    const again = await importCsv(auth, text.replace(/^\uFEFF/, ''));
    expect(again).toMatchObject({ status: 'completed', created_count: 3, error_count: 0 });
    const copies = (await projects(auth)).filter((x) => ![a.id, b.id, c.id].includes(x.id));
    expect(copies.map((x) => [x.name, x.stage_id, x.stage, x.status]).sort()).toEqual([
      ['A', proposal!.id, 'Proposal', 'open'],
      ['B', lost!.id, 'Lost', 'canceled'],
      ['C', null, 'elsewhere', 'open'],
    ]);
  }, 60_000);
});
