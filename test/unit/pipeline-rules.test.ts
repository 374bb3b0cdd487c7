/**
 * The body rules of pipelines-create (contract §19) held against a plain oracle: every generated
 * body is accepted exactly when the oracle says so, a refusal is `pipelines.invalid_request` with
 * details, and an accepted body's stages carry the defaults and forced probabilities.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.js';
import { parsePipelineCreate, parsePipelineUpdate } from '../../shared/schemas/pipelines.js';

/** Mostly valid values, now and then a wrong one: every rule is reached, and bodies pass often enough. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) => fc.oneof({ weight: 30, arbitrary: good }, { weight: 1, arbitrary: bad });
/** Names from a few letters that collide once case and accents are folded (`É`, `e`, ` e `). */
const name = mostly(
  fc.array(fc.constantFrom('a', 'A', 'á', 'e', 'É', 'b', 'c', 'd', 'f', 'g', 'h', 'k', 'm', 'n', ' '), { minLength: 1, maxLength: 6 }).map((cs) => cs.join('')),
  fc.constantFrom<unknown>('', '   ', 'x'.repeat(100), 'x'.repeat(101), ` ${'y'.repeat(100)} `, 7, null, true, ['a']),
);
const kind = mostly(fc.constantFrom(undefined, undefined, 'open', 'won', 'lost'), fc.constantFrom('maybe', 1, null));
const probability = mostly(fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 100 })), fc.constantFrom(-1, 101, 12.5, '50', null));
const rotDays = mostly(fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: 1, max: 365 })), fc.constantFrom(0, 366, 1.5, '7'));
const id = mostly(fc.constantFrom(...Array.from({ length: 12 }, () => undefined), '5d0c7a8e-2b1f-4c3d-9e8f-7a6b5c4d3e2f', '6E1D8B9F-3c2a-4d4e-8f9a-8b7c6d5e4f3a'), fc.constantFrom('not-a-uuid', 5));
const stage = fc.record({ id, name, kind, probability, rot_days: rotDays, extra: mostly(fc.constant(undefined), fc.constant('x')) }).map((s) =>
  Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)),
);
const body = fc.record({
  name: mostly(fc.constant('Sales'), fc.constantFrom<unknown>('', 'x'.repeat(201), 3)),
  stages: mostly(fc.oneof({ weight: 6, arbitrary: fc.array(stage, { minLength: 2, maxLength: 8 }) }, { weight: 1, arbitrary: fc.array(stage, { minLength: 28, maxLength: 31 }) }), fc.constantFrom<unknown>('stages', null, {}, [])),
  is_default: mostly(fc.constantFrom(undefined, true, false), fc.constant('yes')),
}).map((b) => Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isInt = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const fold = (s: string) => s.trim().normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const textOk = (v: unknown, max: number) => typeof v === 'string' && v.trim().length >= 1 && v.trim().length <= max;

/** The oracle: the expected stages, or undefined when the body must be refused. */
function oracle(b: Record<string, unknown>): { name: string; kind: string; probability: number; rot_days: number | null }[] | undefined {
  if (!textOk(b.name, 200)) return undefined;
  if (b.is_default !== undefined && typeof b.is_default !== 'boolean') return undefined;
  const stages = b.stages;
  if (!Array.isArray(stages) || stages.length < 3 || stages.length > 30) return undefined;
  const out: { name: string; kind: string; probability: number; rot_days: number | null }[] = [];
  for (const s of stages as Record<string, unknown>[]) {
    if (Object.keys(s).some((k) => !['id', 'name', 'kind', 'probability', 'rot_days'].includes(k))) return undefined;
    if (s.id !== undefined && !(typeof s.id === 'string' && UUID.test(s.id))) return undefined;
    if (!textOk(s.name, 100)) return undefined;
    if (s.kind !== undefined && !['open', 'won', 'lost'].includes(s.kind as string)) return undefined;
    if (s.probability !== undefined && !isInt(s.probability, 0, 100)) return undefined;
    if (s.rot_days !== undefined && s.rot_days !== null && !isInt(s.rot_days, 1, 365)) return undefined;
    const k = (s.kind as string | undefined) ?? 'open';
    out.push({ name: (s.name as string).trim(), kind: k, probability: k === 'won' ? 100 : k === 'lost' ? 0 : ((s.probability as number | undefined) ?? 0), rot_days: (s.rot_days as number | null | undefined) ?? null });
  }
  if (new Set(out.map((s) => fold(s.name))).size !== out.length) return undefined;
  const ids = (stages as Record<string, unknown>[]).map((s) => s.id).filter((x) => x !== undefined);
  if (new Set(ids).size !== ids.length) return undefined;
  if (!['open', 'won', 'lost'].every((k) => out.some((s) => s.kind === k))) return undefined;
  return out;
}

function outcome(parse: () => { stages?: unknown[] }): { stages: unknown[] } | { code: string; details: number } {
  try {
    const r = parse();
    return { stages: (r.stages ?? []).map((s) => { const { id: _id, ...rest } = s as Record<string, unknown>; return rest; }) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, details: error.details?.length ?? 0 };
  }
}

describe('pipeline body rules against an oracle', () => {
  it('accepts exactly the bodies the oracle accepts, with its stages', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (b) => {
        const expected = oracle(b);
        if (expected) accepted++;
        const got = outcome(() => parsePipelineCreate(structuredClone(b)));
        if (expected) expect(got).toEqual({ stages: expected });
        else expect(got).toMatchObject({ code: 'pipelines.invalid_request', details: expect.any(Number) });
        if (!expected) expect((got as { details: number }).details).toBeGreaterThan(0);
      }),
      { numRuns: 3000 },
    );
    // The generator reaches both answers often (the rules are not tested on refusals alone).
    expect(accepted).toBeGreaterThan(150);
    expect(accepted).toBeLessThan(2700);
  });

  it('applies the same stage rules to pipelines-update', () => {
    fc.assert(
      fc.property(body, (b) => {
        const { is_default: _d, ...rest } = b;
        const input = { ...rest, id: '2c1b0a9f-8e7d-4c6b-9a5f-4e3d2c1b0a9f' };
        const expected = oracle({ ...rest });
        const got = outcome(() => parsePipelineUpdate(structuredClone(input)));
        if (expected) expect(got).toEqual({ stages: expected });
        else expect(got).toMatchObject({ code: 'pipelines.invalid_request' });
      }),
      { numRuns: 1000 },
    );
  });
});
