/**
 * The summaries' pure parts (contract §21): what a project counts in, the deltas of a change, and
 * the values of a group from its counters (amounts by currency, weighted amounts rounded half up
 * once per group and currency) against an oracle in exact rational arithmetic.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CounterValues } from '../../shared/db/summaries.js';
import { contributionsOf, deltasOf, valuesOf } from '../../shared/domain/summaries.js';

describe('summary counters', () => {
  it('counts a pipeline project in its stage, pipeline, status (all and the pipeline\'s) and, once closed, its UTC close month', () => {
    const inStage = contributionsOf('project', { pipeline_id: 'P', stage_id: 'S', status: 'completed', amount: 5, currency: 'USD', closed_at: '2026-03-31T23:30:00.000Z', owner_id: 'M' });
    const groupings = ['close_month#P/2026-03', 'close_month/2026-03', 'pipeline/P', 'stage#P/S', 'status#P/completed', 'status/completed'];
    // Each grouping, the same within its owner's projects (projects-summary owner_id), and by owner.
    const within = (owner: string) => groupings.map((g) => g.replace('/', `@${owner}/`));
    expect(inStage.map((c) => `${c.dimension}/${c.group}`).sort()).toEqual([...groupings, ...within('M'), 'project.owner/M'].sort());
    expect(new Set(inStage.map((c) => c.key))).toEqual(new Set(['S|USD']));
    const outside = contributionsOf('project', { pipeline_id: null, stage_id: null, status: 'open', amount: null, currency: '', closed_at: null });
    expect(outside.map((c) => `${c.dimension}/${c.group}/${c.key}/${c.amount}`)).toEqual(['pipeline/-/status:open|/null', 'status/open/status:open|/null', 'pipeline@-/-/status:open|/null', 'status@-/open/status:open|/null', 'project.owner/-/status:open|/null']);
  });

  it('a change\'s delta is its new image less its old one; other changes and merges\' items have none', () => {
    const old = { id: 'x', pipeline_id: 'P', stage_id: 'A', status: 'open', amount: 100, currency: 'USD', closed_at: null };
    const moved = { ...old, stage_id: 'B' };
    const base = { eventId: 'e', accountId: 'acc', id: 'x', at: '2026-01-01T00:00:00.000Z', type: 'project' as const };
    const d = deltasOf({ ...base, op: 'updated', old, new: moved });
    expect(d.map((x) => [x.dimension, x.group, x.n, x.sums]).sort()).toEqual([
      ['stage#P', 'A', -1, { 'A|USD': -100n }],
      ['stage#P', 'B', 1, { 'B|USD': 100n }],
      ['pipeline', 'P', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['status', 'open', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['status#P', 'open', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['project.owner', '-', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['stage#P@-', 'A', -1, { 'A|USD': -100n }],
      ['stage#P@-', 'B', 1, { 'B|USD': 100n }],
      ['pipeline@-', 'P', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['status@-', 'open', 0, { 'A|USD': -100n, 'B|USD': 100n }],
      ['status#P@-', 'open', 0, { 'A|USD': -100n, 'B|USD': 100n }],
    ].sort());
    // A change of owner moves the project between its owners' groupings, and nothing else.
    const handed = deltasOf({ ...base, op: 'updated', old: { ...old, owner_id: 'M' }, new: { ...old, owner_id: 'N' } });
    expect(handed.every((x) => x.dimension.includes('@') || x.dimension === 'project.owner')).toBe(true);
    expect(handed.filter((x) => x.dimension.endsWith('@M')).every((x) => x.n === -1)).toBe(true);
    expect(handed.filter((x) => x.dimension.endsWith('@N')).every((x) => x.n === 1)).toBe(true);
    expect(deltasOf({ ...base, op: 'updated', old, new: { ...old, name: 'renamed' } })).toEqual([]);
    expect(deltasOf({ ...base, op: 'merged', new: old })).toEqual([]);
    expect(deltasOf({ ...base, type: 'source', op: 'created', new: { id: 's', name: 'Fair' } })).toEqual([]);
    expect(deltasOf({ ...base, op: 'deleted', old }).every((x) => x.n === -1)).toBe(true);
  });

  it('counts a contact by owner and source, a company by owner, an activity by assignee and type (all, and its completed or not completed grouping); null values in the "-" group', () => {
    const places = (type: 'contact' | 'company' | 'activity', r: Record<string, unknown>) => contributionsOf(type, r).map((c) => `${c.dimension}/${c.group}`).sort();
    expect(places('contact', { owner_id: 'M', source_id: null })).toEqual(['contact.owner/M', 'contact.source/-']);
    expect(places('company', { owner_id: null })).toEqual(['company.owner/-']);
    expect(places('activity', { type: 'task', assignee_id: 'M', completed: true })).toEqual(['activity.assignee#done/M', 'activity.assignee/M', 'activity.type#done/task', 'activity.type/task'].sort());
    expect(places('activity', { type: 'note', completed: false })).toEqual(['activity.assignee#open/-', 'activity.assignee/-', 'activity.type#open/note', 'activity.type/note'].sort());
    expect(contributionsOf('contact', {}).every((c) => c.amount === null && c.key === '')).toBe(true);
    // completing a task moves it between the completed groupings only; reassigning it moves it between members in each
    const base = { eventId: 'e', accountId: 'acc', id: 'x', at: '2026-01-01T00:00:00.000Z', type: 'activity' as const };
    const task = { id: 'x', type: 'task', assignee_id: 'M', completed: false };
    expect(deltasOf({ ...base, op: 'updated', old: task, new: { ...task, completed: true } }).map((x) => `${x.dimension}/${x.group}/${x.n}`).sort()).toEqual(['activity.assignee#done/M/1', 'activity.assignee#open/M/-1', 'activity.type#done/task/1', 'activity.type#open/task/-1']);
    expect(deltasOf({ ...base, op: 'updated', old: task, new: { ...task, assignee_id: 'N' } }).map((x) => `${x.dimension}/${x.group}/${x.n}`).sort()).toEqual(['activity.assignee#open/M/-1', 'activity.assignee#open/N/1', 'activity.assignee/M/-1', 'activity.assignee/N/1']);
  });

  it('property: weighted amounts are Σ sum × probability / 100 rounded half up once per group and currency, exactly', () => {
    const bucket = fc.constantFrom('s1', 's2', 's3', 'status:open', 'status:completed', 'status:canceled');
    const currency = fc.constantFrom('USD', 'EUR', '');
    const project = fc.record({ bucket, currency, amount: fc.option(fc.integer({ min: 0, max: 1_000_000_000_000 }), { nil: null }) });
    const probability = fc.record({ s1: fc.integer({ min: 0, max: 100 }), s2: fc.integer({ min: 0, max: 100 }), s3: fc.integer({ min: 0, max: 100 }) });
    fc.assert(
      fc.property(fc.array(fc.array(project, { maxLength: 8 }), { maxLength: 4 }), probability, (counters, probs) => {
        const p = new Map<string, number>([...Object.entries(probs), ['status:open', 0], ['status:completed', 100], ['status:canceled', 0]]);
        const values: CounterValues[] = counters.map((projects) => {
          const c: CounterValues = { n: projects.length, sums: {}, counts: {} };
          for (const x of projects) {
            if (x.amount === null) continue;
            const k = `${x.bucket}|${x.currency}`;
            c.sums[k] = (c.sums[k] ?? 0n) + BigInt(x.amount);
            c.counts[k] = (c.counts[k] ?? 0) + 1;
          }
          return c;
        });
        const all = counters.flat();
        const got = valuesOf(values, p);
        expect(got.count).toBe(all.length);
        const currencies = [...new Set(all.filter((x) => x.amount !== null).map((x) => x.currency))].sort();
        expect(Object.keys(got.amount)).toEqual(currencies);
        for (const cur of currencies) {
          const of = all.filter((x) => x.amount !== null && x.currency === cur);
          expect(got.amount[cur]).toBe(Number(of.reduce((n, x) => n + BigInt(x.amount!), 0n)));
          const hundredths = of.reduce((n, x) => n + BigInt(x.amount!) * BigInt(p.get(x.bucket)!), 0n);
          // half up: the remainder of 50 or more goes up
          expect(got.weighted_amount[cur]).toBe(Number(hundredths / 100n + (hundredths % 100n >= 50n ? 1n : 0n)));
        }
      }),
    );
  });
});
