/**
 * Pipelines and their stages (contract §19, first bullets): create, get, list, update, delete,
 * the account's default and limit, versions, and hostile bodies.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { fileIndexBuildQueue } from '../helpers/stream.js';

// A change that restates a stage queues the job that writes its projects again (not run here).
beforeAll(fileIndexBuildQueue);

interface Stage { id: string; name: string; kind: string; probability: number; rot_days: number | null }
interface Pipeline { id: string; name: string; is_default: boolean; stages: Stage[]; version: number; created_at: string; updated_at: string }

const STAGES = [{ name: 'Lead' }, { name: 'Proposal', probability: 40, rot_days: 14 }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }];
const create = (auth: ReturnType<typeof newAccount>, body: Record<string, unknown> = {}) => ok<Pipeline>('pipelines-create', { name: 'Sales', stages: STAGES, ...body }, auth);
const error = async (op: string, body: unknown, auth: ReturnType<typeof newAccount>) => {
  const r = await invoke(op, body, auth);
  return { status: r.status, code: r.body.error?.code, details: r.body.error?.details ?? [], message: r.body.error?.message ?? '' };
};

describe('pipelines', () => {
  it('creates a pipeline with generated stage ids, defaults and forced probabilities; the first is the default', async () => {
    const auth = newAccount();
    const p = await create(auth, { stages: [...STAGES.slice(0, 2), { name: 'Won', kind: 'won', probability: 20 }, { name: 'Lost', kind: 'lost', probability: 70, rot_days: 3 }] });
    expect(Object.keys(p).sort()).toEqual(['created_at', 'id', 'is_default', 'name', 'stages', 'updated_at', 'version']);
    expect(p).toMatchObject({ name: 'Sales', is_default: true, version: 1 });
    expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(p.stages.map(({ id: _id, ...s }) => s)).toEqual([
      { name: 'Lead', kind: 'open', probability: 0, rot_days: null },
      { name: 'Proposal', kind: 'open', probability: 40, rot_days: 14 },
      { name: 'Won', kind: 'won', probability: 100, rot_days: null },
      { name: 'Lost', kind: 'lost', probability: 0, rot_days: 3 },
    ]);
    expect(new Set(p.stages.map((s) => s.id)).size).toBe(4);
    for (const s of p.stages) expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).toEqual(p);

    const second = await create(auth, { name: 'Renewals' });
    expect(second.is_default).toBe(false);
    expect((await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items.map((x) => x.id)).toEqual([p.id, second.id]);
  });

  it('moves the default atomically, on create and on update, each move a new version of both', async () => {
    const auth = newAccount();
    const a = await create(auth, { name: 'A' });
    const b = await create(auth, { name: 'B', is_default: true });
    expect(b.is_default).toBe(true);
    const a2 = await ok<Pipeline>('pipelines-get', { id: a.id }, auth);
    expect(a2).toMatchObject({ is_default: false, version: 2 });
    const c = await create(auth, { name: 'C' });
    expect((await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items.map((x) => x.name)).toEqual(['B', 'A', 'C']);

    const c2 = await ok<Pipeline>('pipelines-update', { id: c.id, is_default: true }, auth);
    expect(c2).toMatchObject({ is_default: true, version: 2 });
    expect(await ok<Pipeline>('pipelines-get', { id: b.id }, auth)).toMatchObject({ is_default: false, version: 2 });
    const list = (await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items;
    expect(list.map((x) => x.name)).toEqual(['C', 'A', 'B']);
    expect(list.filter((x) => x.is_default)).toHaveLength(1);
    // setting it again changes nothing; unsetting the default is refused
    expect(await ok<Pipeline>('pipelines-update', { id: c.id, is_default: true }, auth)).toEqual(c2);
    expect(await error('pipelines-update', { id: c.id, is_default: false }, auth)).toMatchObject({ status: 400, code: 'pipelines.invalid_request', details: [{ path: 'is_default' }] });
  });

  it('keeps one default when several creates and moves race', async () => {
    const auth = newAccount();
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => create(auth, { name: `P${i}`, is_default: i % 2 === 0 })));
    await Promise.all(made.slice(0, 3).map((p) => ok('pipelines-update', { id: p.id, is_default: true }, auth)));
    const list = (await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items;
    expect(list).toHaveLength(6);
    expect(list.filter((p) => p.is_default)).toHaveLength(1);
    expect(list[0]!.is_default).toBe(true);
  });

  it('updates name and stages: ids keep identity, new stages get ids, version +1 each change, expected_version guards', async () => {
    const auth = newAccount();
    const p = await create(auth);
    const [lead, proposal, won, lost] = p.stages;
    const u = await ok<Pipeline>('pipelines-update', {
      id: p.id,
      name: 'Sales EMEA',
      expected_version: 1,
      stages: [{ id: proposal!.id, name: 'Offer', probability: 55 }, { id: lead!.id, name: 'Lead' }, { name: 'Négociation', probability: 80, rot_days: 7 }, { id: won!.id, name: 'Won', kind: 'won' }, { id: lost!.id, name: 'Lost', kind: 'lost' }],
    }, auth);
    expect(u.version).toBe(2);
    expect(u.name).toBe('Sales EMEA');
    expect(u.stages.map((s) => s.id).slice(0, 2)).toEqual([proposal!.id, lead!.id]);
    expect(u.stages[0]).toEqual({ id: proposal!.id, name: 'Offer', kind: 'open', probability: 55, rot_days: null });
    expect(u.stages[2]!.id).not.toBe(lead!.id);
    expect(u.stages[2]).toMatchObject({ name: 'Négociation', probability: 80, rot_days: 7 });
    expect(u.created_at).toBe(p.created_at);

    // no change: same version
    expect((await ok<Pipeline>('pipelines-update', { id: p.id, name: 'Sales EMEA' }, auth)).version).toBe(2);
    // stale version
    expect(await error('pipelines-update', { id: p.id, name: 'X', expected_version: 1 }, auth)).toMatchObject({ status: 409, code: 'pipelines.conflict' });
    expect((await ok<Pipeline>('pipelines-update', { id: p.id, name: 'X', expected_version: 2 }, auth)).version).toBe(3);
    // a stage id of another pipeline, or of another account, is not one of this pipeline's
    const other = await create(auth, { name: 'Other' });
    const foreign = await error('pipelines-update', { id: p.id, stages: [{ id: other.stages[0]!.id, name: 'A' }, { name: 'B' }, { name: 'W', kind: 'won' }, { name: 'L', kind: 'lost' }] }, auth);
    expect(foreign).toMatchObject({ status: 400, code: 'pipelines.invalid_request', details: [{ path: 'stages.0.id' }] });
    expect((await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).version).toBe(3);
  });

  it('concurrent updates with the same expected_version: exactly one wins', async () => {
    const auth = newAccount();
    const p = await create(auth);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => invoke('pipelines-update', { id: p.id, name: `N${i}`, expected_version: 1 }, auth)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.error?.code === 'pipelines.conflict')).toBe(true);
    expect((await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).version).toBe(2);
    // without expected_version every change lands, each one version
    await Promise.all(Array.from({ length: 4 }, (_, i) => ok('pipelines-update', { id: p.id, name: `M${i}` }, auth)));
    expect((await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).version).toBe(6);
  });

  it('refuses hostile bodies with pipelines.invalid_request and details, writing nothing', async () => {
    const auth = newAccount();
    const bad = (body: Record<string, unknown>) => error('pipelines-create', { name: 'P', stages: STAGES, ...body }, auth);
    const stages = (n: number) => [...Array.from({ length: n - 2 }, (_, i) => ({ name: `S${i}` })), { name: 'W', kind: 'won' }, { name: 'L', kind: 'lost' }];
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 42 }, 'name'],
      [{ name: '  ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ stages: 'Lead,Won,Lost' }, 'stages'],
      [{ stages: stages(31) }, 'stages'],
      [{ stages: [{ name: 'A' }, { name: 'W', kind: 'won' }] }, 'stages'],
      [{ stages: [{ name: 'A' }, { name: 'B' }, { name: 'W', kind: 'won' }] }, 'stages'],
      [{ stages: [{ name: 'Négociation' }, { name: 'NEGOCIATION' }, { name: 'W', kind: 'won' }, { name: 'L', kind: 'lost' }] }, 'stages.1.name'],
      [{ stages: [{ name: 'A' }, { name: ' a ' }, { name: 'W', kind: 'won' }, { name: 'L', kind: 'lost' }] }, 'stages.1.name'],
      [{ stages: [{ name: 'A', kind: 'maybe' }, ...STAGES] }, 'stages.0.kind'],
      [{ stages: [{ name: 'A', probability: 101 }, ...STAGES] }, 'stages.0.probability'],
      [{ stages: [{ name: 'A', probability: 12.5 }, ...STAGES] }, 'stages.0.probability'],
      [{ stages: [{ name: 'A', probability: '50' }, ...STAGES] }, 'stages.0.probability'],
      [{ stages: [{ name: 'A', rot_days: 0 }, ...STAGES] }, 'stages.0.rot_days'],
      [{ stages: [{ name: 'A', rot_days: 366 }, ...STAGES] }, 'stages.0.rot_days'],
      [{ stages: [{ name: 'x'.repeat(101) }, ...STAGES] }, 'stages.0.name'],
      [{ stages: [{ name: '' }, ...STAGES] }, 'stages.0.name'],
      [{ stages: [{ name: 'A', color: 'red' }, ...STAGES] }, 'stages.0.color'],
      [{ stages: [{ id: 'nope', name: 'A' }, ...STAGES] }, 'stages.0.id'],
      [{ stages: [null, ...STAGES] }, 'stages.0'],
      [{ is_default: 'yes' }, 'is_default'],
      [{ version: 3 }, 'version'],
      [{ id: '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f' }, 'id'],
      [{ owner: 'me' }, 'owner'],
    ];
    for (const [body, path] of cases) {
      const e = await bad(body);
      expect(e, JSON.stringify(body).slice(0, 120)).toMatchObject({ status: 400, code: 'pipelines.invalid_request' });
      expect(e.details.map((d) => d.path), JSON.stringify(body).slice(0, 120)).toContain(path);
    }
    expect((await error('pipelines-create', [1, 2], auth)).code).toBe('pipelines.invalid_request');
    expect((await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items).toEqual([]);
    expect((await error('pipelines-list', { limit: 3 }, auth)).code).toBe('pipelines.invalid_request');

    const p = await create(auth);
    for (const body of [{ id: p.id, stages: stages(31) }, { id: p.id, stages: [{ name: 'A' }, { name: 'a' }, { name: 'W', kind: 'won' }, { name: 'L', kind: 'lost' }] }, { id: p.id, expected_version: 'one' }, { id: p.id, move_to: { x: 'y' } }, { id: p.id, created_at: 'now' }]) {
      expect((await error('pipelines-update', body, auth)).code, JSON.stringify(body).slice(0, 80)).toBe('pipelines.invalid_request');
    }
    expect((await error('pipelines-update', { id: 'nope', name: 'x' }, auth)).code).toBe('pipelines.invalid_id');
    expect((await error('pipelines-update', { name: 'x' }, auth)).code).toBe('pipelines.invalid_request');
    expect(await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).toEqual(p);
  });

  it('isolates accounts: another account\'s pipeline is not found', async () => {
    const auth = newAccount();
    const other = newAccount();
    const p = await create(auth);
    for (const [op, body] of [['pipelines-get', { id: p.id }], ['pipelines-update', { id: p.id, name: 'Mine' }], ['pipelines-delete', { id: p.id }]] as const) {
      expect(await error(op, body, other), op).toMatchObject({ status: 404, code: 'pipelines.not_found' });
    }
    expect((await ok<{ items: Pipeline[] }>('pipelines-list', {}, other)).items).toEqual([]);
    expect(await ok<Pipeline>('pipelines-get', { id: p.id }, auth)).toEqual(p);
    // the other account's first pipeline is its own default
    expect((await create(other)).is_default).toBe(true);
  });

  it('deletes: a non-default at once; the default only when it is the last', async () => {
    const auth = newAccount();
    const a = await create(auth, { name: 'A' });
    const b = await create(auth, { name: 'B' });
    expect(await error('pipelines-delete', { id: a.id }, auth)).toMatchObject({ status: 409, code: 'pipelines.conflict' });
    expect(await ok('pipelines-delete', { id: b.id }, auth)).toEqual({ deleted: true });
    expect((await error('pipelines-get', { id: b.id }, auth)).code).toBe('pipelines.not_found');
    expect((await error('pipelines-delete', { id: b.id }, auth)).code).toBe('pipelines.not_found');
    expect(await ok('pipelines-delete', { id: a.id }, auth)).toEqual({ deleted: true });
    expect((await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items).toEqual([]);
    // the next one is the default again
    expect((await create(auth)).is_default).toBe(true);
    expect((await error('pipelines-delete', { id: 'x' }, auth)).code).toBe('pipelines.invalid_id');
  });

  it('holds an account to 50 pipelines, under concurrent creates too', async () => {
    const auth = newAccount();
    for (let i = 0; i < 45; i += 15) await Promise.all(Array.from({ length: 15 }, (_, j) => create(auth, { name: `P${i + j}` })));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => invoke('pipelines-create', { name: `Q${i}`, stages: STAGES }, auth)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.error?.code])).toEqual(Array.from({ length: 3 }, () => [400, 'pipelines.limit_exceeded']));
    const list = (await ok<{ items: Pipeline[] }>('pipelines-list', {}, auth)).items;
    expect(list).toHaveLength(50);
    expect(list.filter((p) => p.is_default)).toHaveLength(1);
    await ok('pipelines-delete', { id: list[49]!.id }, auth);
    expect((await create(auth, { name: 'again' })).name).toBe('again');
  });
});
