/**
 * Summaries (contract §21; docs/data-model.md "Summary counters"): what a record counts in (its
 * contributions to the counters: projects, contacts, companies, activities), the deltas of a batch
 * of record changes and their idempotent application (run by the changes worker,
 * shared/stream/changes.ts), the summaries answered from the counters, and the rebuild that
 * recomputes them from the records.
 *
 * A project's counter holds sums by `<bucket>|<currency>`, the bucket being the project's stage id
 * in a pipeline, else `status:<status>`; the weighted amounts are computed when read, from the
 * current stage probabilities, so a stage's new probability applies at once. The other families'
 * counters hold a count only (`n`).
 */
import { membersByName } from '../db/members.js';
import { listPipelineItems, type PipelineItem } from '../db/pipelines.js';
import {
  accountsWithSummaries,
  addToCounters,
  allCounters,
  applyCounterWrite,
  attributesOf,
  type CounterDelta,
  counterId,
  type CounterItem,
  type CounterValues,
  type CounterWrite,
  MAX_COUNTER_ATTRIBUTES,
  MAX_TRANSACTION_ITEMS,
  readCounters,
  recordsOf,
} from '../db/summaries.js';
import type { EntityType } from '../db/table.js';
import { COUNT_GROUP_BY, type CountedType, type SummaryGroup, type SummaryValues } from '../schemas/summaries.js';
import type { RecordChange } from './record-change.js';

/** The group of the records without the grouping's value (projects outside any pipeline, unowned records…): its API key is null. */
export const NONE = '-';
const NO_PIPELINE = NONE;

/** A probability outside a pipeline, by status (contract §21). */
const STATUS_PROBABILITY: Record<string, number> = { open: 0, completed: 100, canceled: 0 };
const statusBucket = (status: string) => `status:${status}`;

export const dimensions = {
  stage: (pipelineId: string) => `stage#${pipelineId}`,
  pipeline: () => 'pipeline',
  status: (pipelineId?: string) => (pipelineId ? `status#${pipelineId}` : 'status'),
  closeMonth: (pipelineId?: string) => (pipelineId ? `close_month#${pipelineId}` : 'close_month'),
  /** A grouping by a field of a family (`project.owner`, `contact.source`), of completed (`#done`) or other (`#open`) activities only when `completed` is given. */
  grouping: (type: EntityType, groupBy: string, completed?: boolean) => `${type}.${groupBy}${completed === undefined ? '' : completed ? '#done' : '#open'}`,
  /** A projects dimension of one owner's projects only (`projects-summary { owner_id }`; NONE: the unowned ones). */
  ofOwner: (dimension: string, owner: string) => `${dimension}@${owner}`,
};

/** The field each count grouping reads (contract §21), and the projects' owner. */
const GROUPING_FIELDS: Record<string, string> = { owner: 'owner_id', assignee: 'assignee_id', source: 'source_id', type: 'type' };
/** The families whose records count in a summary. */
export const COUNTED_TYPES = ['project', ...(Object.keys(COUNT_GROUP_BY) as CountedType[])] as const;
const groupOf = (r: Record<string, unknown>, field: string) => (typeof r[field] === 'string' && r[field] ? (r[field] as string) : NONE);

/** Where a contact, company or activity counts: each grouping of its family (activities also in their completed or not completed grouping). */
function countedPlaces(type: CountedType, r: Record<string, unknown>): [string, string][] {
  return COUNT_GROUP_BY[type].flatMap((by): [string, string][] => {
    const group = groupOf(r, GROUPING_FIELDS[by]!);
    return type === 'activity' ? [[dimensions.grouping(type, by), group], [dimensions.grouping(type, by, r.completed === true), group]] : [[dimensions.grouping(type, by), group]];
  });
}

// ---- what a project counts in -------------------------------------------------------------------

type Contribution = { dimension: string; group: string; key: string; amount: number | null };

/** The counters a record (as stored) counts in: a project's with its bucket, currency and amount; none for a type without summaries. */
export function contributionsOf(type: EntityType, r: Record<string, unknown>): Contribution[] {
  if (type === 'project') return projectContributions(r);
  if (!(type in COUNT_GROUP_BY)) return [];
  return countedPlaces(type as CountedType, r).map(([dimension, group]) => ({ dimension, group, key: '', amount: null }));
}

function projectContributions(r: Record<string, unknown>): Contribution[] {
  const pipelineId = typeof r.pipeline_id === 'string' && r.pipeline_id ? r.pipeline_id : undefined;
  const stageId = pipelineId && typeof r.stage_id === 'string' && r.stage_id ? r.stage_id : undefined;
  const status = typeof r.status === 'string' && r.status ? r.status : 'open';
  const key = `${stageId ?? statusBucket(status)}|${typeof r.currency === 'string' ? r.currency : ''}`;
  const amount = typeof r.amount === 'number' && Number.isFinite(r.amount) ? r.amount : null;
  const month = status !== 'open' && typeof r.closed_at === 'string' && r.closed_at ? new Date(r.closed_at).toISOString().slice(0, 7) : undefined;
  const owner = groupOf(r, 'owner_id');
  const places: [string, string][] = [[dimensions.pipeline(), pipelineId ?? NO_PIPELINE], [dimensions.status(), status]];
  if (pipelineId) places.push([dimensions.status(pipelineId), status]);
  if (stageId) places.push([dimensions.stage(pipelineId!), stageId]);
  if (month) {
    places.push([dimensions.closeMonth(), month]);
    if (pipelineId) places.push([dimensions.closeMonth(pipelineId), month]);
  }
  // Each grouping again within its owner's projects (`owner_id`), then the grouping by owner.
  const scoped = places.map(([dimension, group]): [string, string] => [dimensions.ofOwner(dimension, owner), group]);
  return [...places, ...scoped, [dimensions.grouping('project', 'owner'), owner] as [string, string]].map(([dimension, group]) => ({ dimension, group, key, amount }));
}

const emptyValues = (): CounterValues => ({ n: 0, sums: {}, counts: {} });

/** Adds `sign` × a record's contributions to `into` (counters by id). */
function addContributions(into: Map<string, CounterDelta>, accountId: string, type: EntityType, record: Record<string, unknown>, sign: 1 | -1): void {
  for (const c of contributionsOf(type, record)) {
    const id = counterId({ accountId, ...c });
    const d = into.get(id) ?? { accountId, dimension: c.dimension, group: c.group, ...emptyValues() };
    d.n += sign;
    if (c.amount !== null) {
      d.sums[c.key] = (d.sums[c.key] ?? 0n) + BigInt(sign * c.amount);
      d.counts[c.key] = (d.counts[c.key] ?? 0) + sign;
    }
    into.set(id, d);
  }
}

/** Drops the zeros: the counters a delta really changes. */
function nonZero(deltas: Iterable<CounterDelta>): CounterDelta[] {
  const out: CounterDelta[] = [];
  for (const d of deltas) {
    const sums = Object.fromEntries(Object.entries(d.sums).filter(([, v]) => v !== 0n));
    const counts = Object.fromEntries(Object.entries(d.counts).filter(([, v]) => v !== 0));
    if (d.n !== 0 || Object.keys(sums).length || Object.keys(counts).length) out.push({ ...d, sums, counts });
  }
  return out;
}

/** A record change's counter deltas: its new image's contributions less its old image's (none for other changes). */
export function deltasOf(change: RecordChange): CounterDelta[] {
  if (!['created', 'updated', 'deleted', 'restored'].includes(change.op)) return [];
  const into = new Map<string, CounterDelta>();
  if (change.old) addContributions(into, change.accountId, change.type, change.old, -1);
  if (change.new) addContributions(into, change.accountId, change.type, change.new, 1);
  return nonZero(into.values());
}

// ---- applying a batch's changes -----------------------------------------------------------------

interface CountedChange {
  accountId: string;
  eventId: string;
  at: string;
  deltas: CounterDelta[];
}

/** The sum of several changes' deltas, one per counter. */
function combined(changes: readonly CountedChange[]): CounterWrite {
  const into = new Map<string, CounterDelta>();
  for (const c of changes) {
    for (const d of c.deltas) {
      const id = counterId(d);
      const t = into.get(id) ?? { accountId: d.accountId, dimension: d.dimension, group: d.group, ...emptyValues() };
      t.n += d.n;
      for (const [k, v] of Object.entries(d.sums)) t.sums[k] = (t.sums[k] ?? 0n) + v;
      for (const [k, v] of Object.entries(d.counts)) t.counts[k] = (t.counts[k] ?? 0) + v;
      into.set(id, t);
    }
  }
  return {
    markers: changes.map((c) => ({ accountId: c.accountId, eventId: c.eventId })),
    deltas: nonZero(into.values()),
    at: changes.reduce((at, c) => (c.at > at ? c.at : at), ''),
  };
}

/**
 * The changes in stream order, cut into runs that fit one transaction: their markers and distinct
 * counters (each counter at most once in it) at most 100 items, and each counter's update at most
 * `MAX_COUNTER_ATTRIBUTES` attributes (a change alone adds at most 5 to a counter).
 */
function runsOf(changes: readonly CountedChange[]): CountedChange[][] {
  const runs: CountedChange[][] = [];
  let run: CountedChange[] = [];
  let counters = new Map<string, Set<string>>();
  const grown = (c: CountedChange) => {
    const next = new Map([...counters].map(([id, attrs]) => [id, new Set(attrs)]));
    for (const d of c.deltas) {
      const attrs = next.get(counterId(d)) ?? new Set<string>();
      for (const a of attributesOf(d)) attrs.add(a);
      next.set(counterId(d), attrs);
    }
    return next;
  };
  for (const c of changes) {
    let next = grown(c);
    if (run.length && (run.length + 1 + next.size > MAX_TRANSACTION_ITEMS || [...next.values()].some((a) => a.size > MAX_COUNTER_ATTRIBUTES))) {
      runs.push(run);
      run = [];
      counters = new Map();
      next = grown(c);
    }
    counters = next;
    run.push(c);
  }
  if (run.length) runs.push(run);
  return runs;
}

/**
 * Counts a batch of record changes (stream order) in the summary counters, idempotently: each
 * transaction puts one marker per change it counts (only if absent) with the counters' summed
 * deltas; a transaction refused by a marker (a redelivered change) is done again one change at a
 * time, the changes already counted skipped. Throws on any other failure (the batch is redone).
 */
export async function countChanges(changes: readonly (RecordChange | undefined)[]): Promise<{ transactions: number; counted: number; skipped: number }> {
  const counted: CountedChange[] = [];
  for (const c of changes) {
    if (!c) continue;
    const deltas = deltasOf(c);
    if (deltas.length) counted.push({ accountId: c.accountId, eventId: c.eventId, at: c.at, deltas });
  }
  const out = { transactions: 0, counted: 0, skipped: 0 };
  for (const run of runsOf(counted)) {
    out.transactions++;
    if (await applyCounterWrite(combined(run))) {
      out.counted += run.length;
      continue;
    }
    for (const one of run) {
      out.transactions++;
      if (await applyCounterWrite(combined([one]))) out.counted++;
      else out.skipped++;
    }
  }
  return out;
}

// ---- a summary's values (its reads: summary-reads.ts) --------------------------------------------

/** Probabilities by bucket: every stage of `pipelines`, and the statuses outside a pipeline. */
export function probabilitiesOf(pipelines: readonly PipelineItem[]): Map<string, number> {
  const out = new Map<string, number>(Object.entries(STATUS_PROBABILITY).map(([s, p]) => [statusBucket(s), p]));
  for (const p of pipelines) for (const s of p.stages) out.set(s.id, s.probability);
  return out;
}

/** `x / 100` rounded half up, in exact integer arithmetic (floor of (x + 50) / 100). */
function hundredthsRounded(x: bigint): number {
  const n = x + 50n;
  const q = n / 100n;
  return Number(n < 0n && q * 100n !== n ? q - 1n : q);
}

/** A group's (or the total's) values from its counters: amounts by currency, weighted ones rounded once per currency. */
export function valuesOf(counters: readonly CounterValues[], probabilities: ReadonlyMap<string, number>): SummaryValues {
  let count = 0;
  const sums = new Map<string, bigint>();
  const weighted = new Map<string, bigint>();
  const amounted = new Map<string, number>();
  for (const c of counters) {
    count += c.n;
    for (const [key, sum] of Object.entries(c.sums)) {
      const cut = key.lastIndexOf('|');
      const [bucket, currency] = [key.slice(0, cut), key.slice(cut + 1)];
      sums.set(currency, (sums.get(currency) ?? 0n) + BigInt(sum));
      weighted.set(currency, (weighted.get(currency) ?? 0n) + BigInt(sum) * BigInt(probabilities.get(bucket) ?? 0));
    }
    for (const [key, n] of Object.entries(c.counts)) {
      const currency = key.slice(key.lastIndexOf('|') + 1);
      amounted.set(currency, (amounted.get(currency) ?? 0) + n);
    }
  }
  const currencies = [...amounted].filter(([, n]) => n > 0).map(([c]) => c).sort();
  return {
    count,
    amount: Object.fromEntries(currencies.map((c) => [c, Number(sums.get(c) ?? 0n)])),
    weighted_amount: Object.fromEntries(currencies.map((c) => [c, hundredthsRounded(weighted.get(c) ?? 0n)])),
  };
}

/** The stage groups of a pipeline (in order) from its stage counters: shared with pipelines-board. */
export function stageGroups(pipeline: PipelineItem, counters: readonly CounterItem[]): SummaryGroup[] {
  const probabilities = probabilitiesOf([pipeline]);
  const byGroup = new Map(counters.map((c) => [c.group, c]));
  return pipeline.stages.map((s) => ({ key: s.id, label: s.name, ...valuesOf(byGroup.has(s.id) ? [byGroup.get(s.id)!] : [], probabilities) }));
}

/** A pipeline's stage counters (one Query of its partition: at most 30 items). */
export const stageCounters = (accountId: string, pipelineId: string) => readCounters(accountId, dimensions.stage(pipelineId));

// ---- rebuilding the counters from the records ---------------------------------------------------

/** What a rebuild corrected in one counter. */
export interface CounterDrift {
  dimension: string;
  group: string;
  n: number;
  sums: Record<string, bigint>;
  counts: Record<string, number>;
}

/**
 * Recomputes every counter of an account from its records (projects, contacts, companies,
 * activities) and adds the difference to
 * each (additive corrections commute with the live deltas the changes worker applies meanwhile,
 * so run it when the account's changes have been applied: a change counted in the records read
 * but not yet by the worker would be counted twice). Returns the drift it corrected.
 */
export async function rebuildSummaries(accountId: string): Promise<CounterDrift[]> {
  const expected = new Map<string, CounterDelta>();
  const pipelineIds = new Set<string>((await listPipelineItems(accountId)).map((p) => p.id));
  for (const type of COUNTED_TYPES) {
    for await (const record of recordsOf(accountId, type)) {
      addContributions(expected, accountId, type, record, 1);
      if (type === 'project' && typeof record.pipeline_id === 'string' && record.pipeline_id) pipelineIds.add(record.pipeline_id);
    }
  }
  const pipelineCounters = await allCounters(accountId, dimensions.pipeline());
  for (const c of pipelineCounters) if (c.group !== NO_PIPELINE) pipelineIds.add(c.group);
  const projectDims = [dimensions.pipeline(), dimensions.status(), dimensions.closeMonth(), ...[...pipelineIds].flatMap((p) => [dimensions.stage(p), dimensions.status(p), dimensions.closeMonth(p)])];
  // The owners whose projects may have counters: every member (any status), the records' owners, and none.
  const owners = new Set<string>([NONE, ...(await allMemberIds(accountId))]);
  for (const d of expected.values()) if (d.dimension.includes('@')) owners.add(d.dimension.slice(d.dimension.lastIndexOf('@') + 1));
  const dims = [...projectDims, ...[...owners].flatMap((o) => projectDims.map((d) => dimensions.ofOwner(d, o))), ...groupingDimensions()];
  const actual = new Map<string, CounterDelta>();
  await Promise.all(
    dims.map(async (dimension) => {
      for (const c of dimension === dimensions.pipeline() ? pipelineCounters : await allCounters(accountId, dimension)) {
        actual.set(counterId({ accountId, dimension, group: c.group }), { accountId, dimension, group: c.group, n: c.n, sums: c.sums, counts: c.counts });
      }
    }),
  );
  const corrections = new Map<string, CounterDelta>();
  const diff = (id: string, d: CounterDelta, sign: 1 | -1) => {
    const t = corrections.get(id) ?? { accountId, dimension: d.dimension, group: d.group, ...emptyValues() };
    t.n += sign * d.n;
    for (const [k, v] of Object.entries(d.sums)) t.sums[k] = (t.sums[k] ?? 0n) + BigInt(sign) * v;
    for (const [k, v] of Object.entries(d.counts)) t.counts[k] = (t.counts[k] ?? 0) + sign * v;
    corrections.set(id, t);
  };
  for (const [id, d] of expected) diff(id, d, 1);
  for (const [id, d] of actual) diff(id, d, -1);
  const drift = nonZero(corrections.values());
  await addToCounters(drift);
  return drift.map(({ dimension, group, n, sums, counts }) => ({ dimension, group, n, sums, counts }));
}

/** Every member of the account, active and deactivated (pages of their name entries). */
async function allMemberIds(accountId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const status of ['active', 'deactivated'] as const) {
    for (let after: string | undefined; ; ) {
      const page = await membersByName(accountId, status, after, 100);
      ids.push(...page.map((m) => m.id));
      if (page.length < 100) break;
      after = page.at(-1)!.at;
    }
  }
  return ids;
}

/** Every dimension of the groupings by a field: the projects' owner, the count summaries' (activities' also by completion). */
const groupingDimensions = () => [
  dimensions.grouping('project', 'owner'),
  ...(Object.keys(COUNT_GROUP_BY) as CountedType[]).flatMap((type) =>
    COUNT_GROUP_BY[type].flatMap((by) => (type === 'activity' ? [undefined, true, false].map((c) => dimensions.grouping(type, by, c)) : [dimensions.grouping(type, by)])),
  ),
];

/** Every account that has records of a summarised family or counters (a Scan of both tables). */
export const summaryAccounts = (): Promise<Set<string>> => accountsWithSummaries(COUNTED_TYPES);
