/**
 * Reading the summaries (contract §21): `projects-summary` and the counts of `contacts-summary`,
 * `companies-summary`, `activities-summary`, answered from the counters the changes worker keeps
 * (shared/domain/summaries.ts) with their groups' current names: members, lead sources, pipelines
 * and stages. Apart from the counters' upkeep, so that the changes worker and the board do not
 * carry the members' and lead sources' reads.
 */
import { getMemberItem, membersByName } from '../db/members.js';
import { getPipelineItem, listPipelineItems, type PipelineItem } from '../db/pipelines.js';
import { allCounters, type CounterItem, readCounters, recordsOf } from '../db/summaries.js';
import { ApiError, type ErrorDetail, invalidRequest } from '../errors.js';
import { ACTIVITY_TYPES } from '../schemas/entities/activity.js';
import { PROJECT_STATUSES } from '../schemas/entities/project.js';
import type { CountSummaryInput, CountSummaryResult } from '../schemas/count-summaries.js';
import type { CountedType, ProjectsSummaryInput, SummaryResult } from '../schemas/summaries.js';
import type { OperationContext } from './context.js';
import { dimensions, NONE, probabilitiesOf, valuesOf } from './summaries.js';

const FAMILY = 'projects';
const NO_PIPELINE = NONE;
/** At most this many months in a `close_month` summary. */
export const MAX_MONTHS = 36;
/** The months of a `close_month` summary without `closed_from`: this many, ending with `closed_to`. */
const DEFAULT_MONTHS = 12;

/** The newest change the counters read include (their `at`), else the time of reading. */
const asOf = (counters: readonly CounterItem[]) => counters.reduce((at, c) => (c.at && c.at > at ? c.at : at), '') || new Date().toISOString();

const MONTH = /^(\d{4})-(\d{2})$/;
const monthIndex = (m: string) => {
  const [, y, mm] = MONTH.exec(m)!;
  return Number(y) * 12 + Number(mm) - 1;
};
const monthOf = (i: number) => `${String(Math.floor(i / 12)).padStart(4, '0')}-${String((i % 12) + 1).padStart(2, '0')}`;

/** The months of a `close_month` summary (checked: in order, at most 36). */
function monthsOf(input: ProjectsSummaryInput, details: ErrorDetail[]): string[] {
  const to = input.closed_to ? monthIndex(input.closed_to) : input.closed_from ? Math.max(monthIndex(input.closed_from), monthIndex(new Date().toISOString().slice(0, 7))) : monthIndex(new Date().toISOString().slice(0, 7));
  const from = input.closed_from ? monthIndex(input.closed_from) : to - (DEFAULT_MONTHS - 1);
  if (from > to) details.push({ path: 'closed_to', message: 'must not be before closed_from' });
  else if (to - from + 1 > MAX_MONTHS) details.push({ path: input.closed_from ? 'closed_from' : 'closed_to', message: `the range spans ${to - from + 1} months; at most ${MAX_MONTHS}` });
  return from > to ? [] : Array.from({ length: to - from + 1 }, (_, i) => monthOf(from + i));
}

/** The request's rules beyond its schema (contract §21): `details` for each. */
function checked(input: ProjectsSummaryInput): { months: string[] } {
  const details: ErrorDetail[] = [];
  if (input.owner_id !== undefined && input.group_by === 'owner') details.push({ path: 'owner_id', message: 'does not apply to group_by owner (each owner is a group)' });
  if (input.group_by === 'stage' && !input.pipeline_id) details.push({ path: 'pipeline_id', message: 'is required for group_by stage' });
  if (input.group_by === 'pipeline' && input.pipeline_id) details.push({ path: 'pipeline_id', message: 'does not apply to group_by pipeline (each pipeline is a group)' });
  if (input.group_by === 'owner' && input.pipeline_id) details.push({ path: 'pipeline_id', message: 'does not apply to group_by owner' });
  if (input.group_by !== 'close_month') {
    for (const f of ['closed_from', 'closed_to'] as const) if (input[f] !== undefined) details.push({ path: f, message: 'applies only to group_by close_month' });
  }
  const months = input.group_by === 'close_month' ? monthsOf(input, details) : [];
  if (details.length) throw invalidRequest(FAMILY, details.map((d) => `${d.path}: ${d.message}`).join('; '), details);
  return { months };
}

const invalidPipeline = () => {
  const message = 'is not a pipeline of the account';
  return new ApiError(`${FAMILY}.invalid_pipeline_id`, `pipeline_id ${message}`, [{ path: 'pipeline_id', message }]);
};

/** The pipelines a summary needs (one by id, or all of them), and the dimension's counters, read together. */
async function readFor(accountId: string, pipelineId: string | undefined, dimension: string, range?: { from: string; to: string }) {
  const [pipelines, counters] = await Promise.all([
    pipelineId ? getPipelineItem(accountId, pipelineId).then((p) => (p ? [p] : undefined)) : listPipelineItems(accountId),
    readCounters(accountId, dimension, range),
  ]);
  if (!pipelines) throw invalidPipeline();
  return { pipelines, counters };
}

/** The default first, then by creation (as pipelines-list). */
const inListOrder = (items: PipelineItem[]) => [...items].sort((a, b) => Number(b.is_default) - Number(a.is_default) || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));

interface Grouped {
  key: string | null;
  label: string;
  counters: CounterItem[];
}
const pickFrom = (counters: readonly CounterItem[]) => (group: string) => counters.filter((c) => c.group === group);

/** Every active member by name (pages of their name entries: at most 1,000 members an account). */
async function activeMembers(accountId: string): Promise<{ id: string; name: string }[]> {
  const out: { id: string; name: string }[] = [];
  for (let after: string | undefined; ; ) {
    const page = await membersByName(accountId, 'active', after, 100);
    out.push(...page.map((m) => ({ id: m.id, name: m.name })));
    if (page.length < 100) return out;
    after = page.at(-1)!.at;
  }
}

/**
 * A member grouping's counters and groups: every active member by name, then the other members
 * (deactivated) that still hold counted records, by name, then null. Reads the dimension's
 * counters and the active members' name entries, and one member per such other group.
 */
async function memberGroups(accountId: string, dimension: string, noneLabel: string): Promise<{ counters: CounterItem[]; groups: Grouped[] }> {
  const [counters, active] = await Promise.all([allCounters(accountId, dimension), activeMembers(accountId)]);
  const shown = new Set(active.map((m) => m.id));
  const held = counters.filter((c) => c.group !== NONE && !shown.has(c.group) && c.n > 0);
  const others = (await Promise.all(held.map((c) => getMemberItem(accountId, c.group)))).flatMap((m) => (m ? [{ id: m.id, name: m.name }] : []));
  others.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const pick = pickFrom(counters);
  return { counters, groups: [...[...active, ...others].map((m): Grouped => ({ key: m.id, label: m.name, counters: pick(m.id) })), { key: null, label: noneLabel, counters: pick(NONE) }] };
}

/** The lead source grouping's counters and groups: every lead source by name, then null. */
async function sourceGroups(accountId: string, dimension: string): Promise<{ counters: CounterItem[]; groups: Grouped[] }> {
  const sources: { id: string; name: string }[] = [];
  const [counters] = await Promise.all([
    allCounters(accountId, dimension),
    (async () => {
      for await (const r of recordsOf(accountId, 'source')) sources.push({ id: String(r.id), name: String(r.name ?? '') });
    })(),
  ]);
  sources.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const pick = pickFrom(counters);
  return { counters, groups: [...sources.map((x) => ({ key: x.id, label: x.name, counters: pick(x.id) })), { key: null, label: 'No source', counters: pick(NONE) }] };
}

const NONE_LABELS: Record<string, string> = { owner: 'No owner', assignee: 'Unassigned' };

/** contacts-summary, companies-summary, activities-summary (contract §21): counts by owner, assignee, lead source or activity type. */
export async function countSummary(ctx: OperationContext, type: CountedType, input: CountSummaryInput): Promise<CountSummaryResult> {
  const dimension = dimensions.grouping(type, input.group_by, input.completed);
  let read: { counters: CounterItem[]; groups: Grouped[] };
  if (input.group_by === 'source') read = await sourceGroups(ctx.accountId, dimension);
  else if (input.group_by === 'type') {
    const counters = await allCounters(ctx.accountId, dimension);
    read = { counters, groups: ACTIVITY_TYPES.map((t) => ({ key: t, label: t, counters: pickFrom(counters)(t) })) };
  } else read = await memberGroups(ctx.accountId, dimension, NONE_LABELS[input.group_by]!);
  const count = (cs: readonly CounterItem[]) => cs.reduce((n, c) => n + c.n, 0);
  return {
    groups: read.groups.map((g) => ({ key: g.key, label: g.label, count: count(g.counters) })),
    total: { count: count(read.groups.flatMap((g) => g.counters)) },
    as_of: asOf(read.counters),
  };
}

/** projects-summary (contract §21). */
export async function projectsSummary(ctx: OperationContext, input: ProjectsSummaryInput): Promise<SummaryResult> {
  const { months } = checked(input);
  const pid = input.pipeline_id;
  const owner = input.owner_id === 'none' ? NONE : input.owner_id?.toLowerCase();
  if (owner && owner !== NONE && !(await getMemberItem(ctx.accountId, owner))) {
    const message = 'is not a member of the account';
    throw new ApiError(`${FAMILY}.invalid_owner_id`, `owner_id ${message}`, [{ path: 'owner_id', message }]);
  }
  /** The dimension, within the owner's projects when `owner_id` is given. */
  const scoped = (dimension: string) => (owner ? dimensions.ofOwner(dimension, owner) : dimension);
  let pipelines: PipelineItem[];
  let counters: CounterItem[];
  let groups: { key: string | null; label: string; counters: CounterItem[] }[];
  const pick = (group: string) => counters.filter((c) => c.group === group);
  switch (input.group_by) {
    case 'stage': {
      ({ pipelines, counters } = await readFor(ctx.accountId, pid, scoped(dimensions.stage(pid!))));
      groups = pipelines[0]!.stages.map((s) => ({ key: s.id, label: s.name, counters: pick(s.id) }));
      break;
    }
    case 'pipeline': {
      ({ pipelines, counters } = await readFor(ctx.accountId, undefined, scoped(dimensions.pipeline())));
      groups = [...inListOrder(pipelines).map((p) => ({ key: p.id, label: p.name, counters: pick(p.id) })), { key: null, label: 'No pipeline', counters: pick(NO_PIPELINE) }];
      break;
    }
    case 'owner': {
      const read = await Promise.all([listPipelineItems(ctx.accountId), memberGroups(ctx.accountId, dimensions.grouping('project', 'owner'), 'No owner')]);
      [pipelines, { counters, groups }] = read;
      break;
    }
    case 'status': {
      ({ pipelines, counters } = await readFor(ctx.accountId, pid, scoped(dimensions.status(pid))));
      groups = PROJECT_STATUSES.map((s) => ({ key: s, label: s, counters: pick(s) }));
      break;
    }
    default: {
      ({ pipelines, counters } = await readFor(ctx.accountId, pid, scoped(dimensions.closeMonth(pid)), { from: months[0]!, to: months[months.length - 1]! }));
      groups = months.map((m) => ({ key: m, label: m, counters: pick(m) }));
    }
  }
  const probabilities = probabilitiesOf(pipelines);
  const shown = groups.flatMap((g) => g.counters);
  return {
    groups: groups.map((g) => ({ key: g.key, label: g.label, ...valuesOf(g.counters, probabilities) })),
    total: valuesOf(shown, probabilities),
    as_of: asOf(counters),
  };
}
