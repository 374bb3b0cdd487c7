/**
 * Lists (contract §4): the request becomes a declarative plan (`ListPlan`: the index options,
 * the residual predicates as data, the search to re-check) that the data layer's list engine
 * runs (`runListPlan`, shared/db/lists.ts); the records come back to be shaped here. Nothing
 * calls back from the data layer. The engine is not part of the record store, so that the
 * bundles of record writes do not carry it (docs/performance.md, "Cold start").
 */
import { type AccountMeta, overrideAttr, readMeta } from '../../db/meta.js';
import { type ListPlan, type Predicate, type ReadOrder, runListPlan, SORT_LIMIT, type SortedRead, stageRecords } from '../../db/lists.js';
import { positionOf } from '../../db/items.js';
import { type EntityType, indexName, orderKey } from '../../db/table.js';
import { NO_REF, tagsField } from '../../schemas/entities/index.js';
import { canonicalSearch, type IndexOption, parseQuery, type SearchKey, searchOptions } from '../../search/index.js';
import type { OperationContext } from '../context.js';
import { cursorScope, DEFAULT_LIMIT, type Page } from '../listing.js';
import { NAMED_TARGETS, type RecordFamily, toApi } from './family.js';
import { type ListQuery, resolveQuery } from './query.js';
import { ApiError } from '../../errors.js';
import { type Condition, type Filter } from '../../schemas/filter.js';

const partitionOf = (key: SearchKey) => (key.kind === 'email' ? indexName.email(key.email) : indexName.word(key.prefix));

/** The request's filters: tags (all of them), and the values of each other filtered field (filters on one field are OR-ed: company_id + company_ids). */
function filtersOf(fam: RecordFamily, input: Record<string, unknown>) {
  const groups = new Map<string, { kind: string; values: unknown[] }>();
  let tags: string[] = [];
  for (const [name, filter] of Object.entries(fam.def.filters)) {
    const value = input[name];
    if (value === undefined) continue;
    if (filter.kind === 'tags') {
      tags = [...new Set(value as string[])];
      continue;
    }
    const values = filter.kind === 'bool' || filter.kind === 'ref' ? [value] : [...new Set(value as unknown[])];
    if (values.length === 0) continue;
    const g = groups.get(filter.field) ?? { kind: filter.kind === 'refs' ? 'ref' : filter.kind, values: [] };
    g.values = [...new Set([...g.values, ...values])];
    groups.set(filter.field, g);
  }
  return { tags, groups };
}

/** The conditions every match must meet: the filter itself, or the conditions of its top-level `and`. */
const requiredConditions = (filter: Filter | undefined): Condition[] =>
  !filter ? [] : 'and' in filter ? filter.and.filter((f): f is Condition => 'field' in f) : 'field' in filter ? [filter] : [];

/**
 * Index options a filter's required conditions give (contract §17, served at flat cost): `eq`/`in`
 * on an enumerated or boolean field the definition indexes, on a reference, `contains`,
 * `contains_any`, `contains_all` on tags or on an id list. Every option holds every match.
 */
function filterOptions(fam: RecordFamily, conditions: Condition[]): IndexOption[] {
  const valueFields = new Set(Object.values(fam.def.filters).filter((f) => f.kind === 'values' || f.kind === 'bool').map((f) => f.field));
  const tagField = tagsField(fam.def);
  const out: IndexOption[] = [];
  const union = (names: string[]) => out.push({ names, sampled: false });
  for (const c of conditions) {
    const values = Array.isArray(c.value) ? c.value : [c.value];
    const ref = fam.refs.find((r) => r.field === c.field);
    const nameOf = ref ? (x: unknown) => indexName.ref(ref.target as EntityType, String(x)) : c.field === tagField ? (x: unknown) => indexName.tag(String(x)) : undefined;
    if ((c.op === 'eq' || c.op === 'in') && valueFields.has(c.field)) union(values.map((x) => indexName.value(c.field, String(x))));
    else if (nameOf && (c.op === 'eq' || c.op === 'in' || c.op === 'contains' || c.op === 'contains_any')) union(values.map(nameOf));
    else if (nameOf && c.op === 'contains_all') values.forEach((x) => union([nameOf(x)]));
  }
  return out;
}

/** The read order: oldest first for a `created_at` `asc` sort; the window `created_at` conditions allow (loose: the re-check is exact). */
function readOrder(listQuery: ListQuery | undefined): ReadOrder | undefined {
  const forward = listQuery?.sort?.field === 'created_at' && listQuery.sort.direction === 'asc';
  let from: string | undefined;
  let to: string | undefined;
  const ms = (x: unknown) => new Date(String(x)).toISOString();
  for (const c of requiredConditions(listQuery?.filter)) {
    if (c.field !== 'created_at') continue;
    const [lo, hi] = c.op === 'between' ? (c.value as unknown[]) : c.op === 'eq' ? [c.value, c.value] : c.op === 'gt' || c.op === 'gte' ? [c.value, undefined] : c.op === 'lt' || c.op === 'lte' ? [undefined, c.value] : [];
    if (lo !== undefined) from = [from, orderKey(ms(lo), '')].filter((x) => x !== undefined).sort().at(-1);
    if (hi !== undefined) to = [to, orderKey(ms(hi), '\uffff')].filter((x) => x !== undefined).sort()[0];
  }
  if (!forward && from === undefined && to === undefined) return undefined;
  return { forward, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
}

/** Operators whose matches lie in ranges of a sorted field's entries (`not_exists`: its empty section), most selective first. */
const RANGE_OPS = ['eq', 'in', 'prefix', 'between', 'gt', 'gte', 'lt', 'lte', 'not_exists'] as const;

/**
 * The sort-ordered entries a page may read (contract §17): the sort's, when its field keeps them
 * (with a condition of the filter on the same field, which bounds the read), and the required
 * conditions on fields that keep them, for pages in the list's own order (two at most, the most
 * selective operators first: each is tried while its entries are few).
 */
function sortedReads(listQuery: ListQuery | undefined): { sorted?: SortedRead; narrow?: SortedRead[] } {
  if (!listQuery) return {};
  const ranged = requiredConditions(listQuery.filter)
    .filter((c) => listQuery.fields[c.field]?.indexed === 'ready' && (RANGE_OPS as readonly string[]).includes(c.op))
    .sort((a, b) => RANGE_OPS.indexOf(a.op as (typeof RANGE_OPS)[number]) - RANGE_OPS.indexOf(b.op as (typeof RANGE_OPS)[number]));
  const sort = listQuery.sort;
  if (sort && sort.field !== 'created_at') {
    const field = listQuery.fields[sort.field]!;
    if (field.indexed !== 'ready') return {};
    const condition = ranged.find((c) => c.field === sort.field);
    return { sorted: { field: sort.field, type: field.type, direction: sort.direction, ...(condition ? { condition } : {}) } };
  }
  const narrow = ranged.slice(0, 2).map((c) => ({ field: c.field, type: listQuery.fields[c.field]!.type, condition: c }));
  return narrow.length ? { narrow } : {};
}

/**
 * The plan of a list request (without its position): index options (search words' partitions
 * first, then each tag's, then each filtered field's union), the predicates every record must
 * meet (different fields AND-ed), the search to re-check; and the filters in canonical form
 * (the cursor's scope). Undefined when the search can match nothing.
 */
export function planOf(fam: RecordFamily, input: Record<string, unknown>, listQuery?: ListQuery, meta?: AccountMeta): { plan: Omit<ListPlan, 'after' | 'limit'>; canonical: Record<string, unknown> } | undefined {
  const { def, refs } = fam;
  const query = def.search ? parseQuery(input.search as string | undefined, { exactEmail: def.exactEmailSearch }) : undefined;
  if (query && query.words.length === 0 && !query.phoneDigits && query.email === undefined) return undefined;
  const { tags, groups } = filtersOf(fam, input);
  const canonical = {
    ...(def.search ? { search: canonicalSearch(input.search as string | undefined) } : {}),
    tags: [...tags].sort(),
    ...Object.fromEntries([...groups].map(([field, g]) => [field, g.values.map(String).sort()])),
    ...(listQuery?.filter ? { filter: listQuery.filter } : {}),
    ...(listQuery?.sort ? { sort: listQuery.sort } : {}),
  };
  const options: IndexOption[] = [
    ...(query ? searchOptions(query) : []).map((keys) => ({ names: keys.map(partitionOf), sampled: keys.every((k) => k.kind === 'prefix') })),
    ...tags.map((t) => ({ names: [indexName.tag(t)], sampled: false })),
  ];
  // A reference filter's `"none"` (`owner_id: "none"`): the records whose reference is null, the
  // empty section of the field's sort-ordered entries (contract §20), in the list's own order.
  const unlinked: SortedRead[] = [];
  for (const [field, g] of groups) {
    const ref = refs.find((r) => r.field === field);
    if (ref && g.values.includes(NO_REF)) {
      g.values = [null];
      if (def.sorted?.includes(field)) unlinked.push({ field, type: 'id', condition: { field, op: 'not_exists' } });
      continue;
    }
    // A merged record (contract §15) reads as its primary until its links have moved: its own
    // partition holds those links meanwhile, so a filter on the primary reads it too.
    const ids = ref ? [...g.values.map(String), ...mergedInto(meta, ref.target as EntityType, g.values.map(String))] : [];
    options.push({ names: ref ? ids.map((id) => indexName.ref(ref.target as EntityType, id)) : g.values.map((val) => indexName.value(field, String(val))), sampled: false });
  }
  options.push(...filterOptions(fam, requiredConditions(listQuery?.filter)));
  const order = readOrder(listQuery);
  // `created_at` in either direction is the list's own order: no in-memory sort.
  const planQuery = listQuery && (listQuery.sort?.field === 'created_at' ? { ...(listQuery.filter ? { filter: listQuery.filter } : {}), fields: listQuery.fields } : listQuery);
  const tagField = tagsField(def);
  const where: Predicate[] = [
    ...(tagField && tags.length ? [{ field: tagField, op: 'hasAll' as const, values: tags }] : []),
    ...[...groups].map(([field, g]) => ({ field, op: 'in' as const, values: g.values })),
  ];
  const search = query && { query, ...(def.lookup?.index === 'email' ? { emailField: def.lookup.field } : {}) };
  const reads = sortedReads(listQuery);
  if (unlinked.length) reads.narrow = [...unlinked, ...(reads.narrow ?? [])];
  return { plan: { options, where, ...(search ? { search } : {}), ...(planQuery ? { query: planQuery } : {}), ...(order ? { order } : {}), ...reads }, canonical };
}

/** Ids of records merged into one of `ids` whose links are still moving (META overrides with `to`). */
function mergedInto(meta: AccountMeta | undefined, target: EntityType, ids: readonly string[]): string[] {
  if (!meta) return [];
  const prefix = overrideAttr(target, '');
  return [...meta.overrides].flatMap(([attr, o]) => (attr.startsWith(prefix) && typeof o.to === 'string' && ids.includes(o.to) ? [attr.slice(prefix.length)] : []));
}

export async function list(fam: RecordFamily, ctx: OperationContext, input: Record<string, unknown>): Promise<Page<Record<string, unknown>>> {
  const query = await resolveQuery(fam.def, ctx.accountId, input, fam.family);
  // A filter on a record others can be merged into needs the account's meta to plan (read once, for the page too).
  const merges = fam.refs.some((r) => NAMED_TARGETS.has(r.target) && Object.entries(fam.def.filters).some(([name, f]) => f.field === r.field && input[name] !== undefined));
  const meta = merges ? await readMeta(ctx.accountId) : undefined;
  const planned = planOf(fam, input, query, meta);
  if (!planned) return { items: [], next_cursor: '' };
  const { after, next } = await cursorScope(ctx, fam.family, input.cursor as string | undefined, planned.canonical);
  const limit = (input.limit as number | undefined) ?? DEFAULT_LIMIT;
  const page = await runListPlan(fam.def, ctx.accountId, { ...planned.plan, ...(after ? { after } : {}), limit }, meta);
  if (page.tooLarge) {
    throw new ApiError(
      `${fam.family}.sort_too_large`,
      `sort on ${query?.sort?.field} is only possible for at most ${SORT_LIMIT} records matching the rest of the query; narrow it with an indexed filter, or sort on a field that sorts at any size: ${['created_at', ...(fam.def.sorted ?? [])].join(', ')}, or a custom field once its definition is indexed`,
    );
  }
  return { items: page.items.map((r) => toApi(fam, r, page.meta)), next_cursor: next(page.next) };
}

/**
 * A column of pipelines-board (contract §19): the newest `limit` records of one stage, as
 * projects-list lists them with `input` (its `filter: stage_id eq`, which reads the same index), and
 * the cursor that continues it there. One Query of `limit` records: whether more exist is told by
 * `count`, the stage's counter (§21): a column that shows `limit` records has more unless its count
 * is exactly `limit` (a count that lags a write by its few seconds errs towards a cursor, whose
 * page may then be empty).
 */
export async function stageColumn(fam: RecordFamily, ctx: OperationContext, input: Record<string, unknown>, stageId: string, count: number, meta: AccountMeta): Promise<Page<Record<string, unknown>>> {
  const query = await resolveQuery(fam.def, ctx.accountId, input, fam.family);
  const planned = planOf(fam, input, query)!;
  const { next } = await cursorScope(ctx, fam.family, undefined, planned.canonical);
  const limit = (input.limit as number | undefined) ?? DEFAULT_LIMIT;
  const { items } = await stageRecords(fam.def.type as EntityType, ctx.accountId, stageId, limit);
  const last = items[items.length - 1];
  const more = last !== undefined && items.length === limit && count !== limit;
  return { items: items.map((r) => toApi(fam, r, meta)), next_cursor: more ? next(positionOf(last)) : '' };
}
