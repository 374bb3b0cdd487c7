/**
 * The list engine, run from a declarative plan (`ListPlan`, built by the domain): the index to
 * read is chosen among the plan's options (shared/search/index-choice.ts: a few COUNT probes and
 * sampled sizes); a driver yields candidate positions newest first (the account's GSI list, or a
 * k-way merge of index partitions); records are fetched and re-checked against the plan's
 * predicates and search words, on the record as the API shows it (`currentView`), until the page
 * (plus one, to know whether more exist) is full. Reads stay in proportion to the page.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { EntityDefinition } from '../schemas/entities/index.js';
import { compareSort, type Condition, CUSTOM_FIELD_PREFIX, type FieldType, type Filter, type FilterField, matchesFilter, type Sort, type SortPosition, sortKeyOf, sortPosition } from '../schemas/filter.js';
import { distinctOptions, type IndexOption, matchesQuery, measurements, pickOption, type SearchQuery } from '../search/index.js';
import { db, tableName } from './client.js';
import { afterCursor, merge, pageOf, partition, sortKey } from './expr.js';
import { batchGetRecords, positionOf, type StoredRecord } from './items.js';
import { type AccountMeta, readMeta } from './meta.js';
import { currentView, searchWords, sortedFieldValue, sortedKeyOf } from './record-model.js';
import { estimatePartitionSizes, partitionTableName } from './search.js';
import { type EntityType, keys, TABLE_DEFINITION } from './table.js';

export type Driver =
  /** The account's whole list (GSI1), optionally re-checked. */
  | { kind: 'all' }
  /** One pipeline stage's records (GSI2, on the records themselves: an `eq` on `stage_id`). */
  | { kind: 'stage'; stageId: string }
  /** The union of index partitions (one tag, a company set, a search prefix, …). */
  | { kind: 'index'; names: string[] }
  /**
   * The entries of some values of a sorted field (an `eq` or `in` condition, contract §17): each
   * value's entries are keyed `v<value>\u0001<position>` (`prefixes`: one per value), so each
   * value is read in the list's own order, as an index partition is.
   */
  | { kind: 'values'; partition: string; prefixes: string[] };

interface Candidate {
  position: string;
  id: string;
  item?: StoredRecord;
}

/** Newest-first (or, `forward`, oldest-first) reader of one partition, strictly beyond `after`, page by page (handles empty pages). */
export async function* readPartition(
  input: Omit<QueryCommandInput, 'TableName'> & { TableName?: string },
  sortAttr: string,
  after: string | undefined,
  pageSize: number,
  forward = false,
): AsyncGenerator<Record<string, unknown>> {
  let startKey: Record<string, unknown> | undefined;
  const beyond = merge(input, after && sortKey(sortAttr, [forward ? '>' : '<', after]));
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...input,
        ...beyond,
        ScanIndexForward: forward,
        Limit: pageSize,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) yield item;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/**
 * The order a page reads positions in (`createdAt#id`): newest first, or oldest first
 * (`forward`, a `created_at` `asc` sort), within an optional window of positions (`created_at`
 * conditions): `from` ≤ every position read ≤ `to`.
 */
export interface ReadOrder {
  forward: boolean;
  from?: string;
  to?: string;
}

/** The position to start beyond, and whether a position is past the window's far end. */
function windowOf(order: ReadOrder, after: string | undefined) {
  const pick = (a: string | undefined, b: string | undefined, f: (x: string, y: string) => string) => (a === undefined ? b : b === undefined ? a : f(a, b));
  const start = order.forward ? pick(after, order.from, (x, y) => (x > y ? x : y)) : pick(after, order.to, (x, y) => (x < y ? x : y));
  const beyond = (position: string) => (order.forward ? order.to !== undefined && position > order.to : order.from !== undefined && position < order.from);
  return { start, beyond };
}

async function* candidates(type: EntityType, accountId: string, driver: Driver, after: string | undefined, pageSize: number, order: ReadOrder = { forward: false }): AsyncGenerator<Candidate> {
  const { start, beyond } = windowOf(order, after);
  if (driver.kind === 'all' || driver.kind === 'stage') {
    const g = driver.kind === 'all' ? TABLE_DEFINITION.gsi1 : TABLE_DEFINITION.gsi2;
    const pk = driver.kind === 'all' ? keys.listPartition(accountId, type) : keys.stagePartition(accountId, type, driver.stageId);
    for await (const item of readPartition(
      { IndexName: g.name, ...partition(pk, undefined, { pk: g.partitionKey, sk: g.sortKey }) },
      g.sortKey,
      start,
      pageSize,
      order.forward,
    )) {
      const position = String(item[g.sortKey]);
      if (beyond(position)) return;
      yield { position, id: String(item.id), item: item as StoredRecord };
    }
    return;
  }
  const readers =
    driver.kind === 'values'
      ? [...new Set(driver.prefixes)].map((prefix) => readValue(driver.partition, prefix, start, pageSize, order.forward)[Symbol.asyncIterator]())
      : [...new Set(driver.names)].map((name) =>
          readPartition(
            { TableName: partitionTableName(name), ...partition(keys.indexPartition(accountId, type, name)) },
            'sk',
            start,
            pageSize,
            order.forward,
          )[Symbol.asyncIterator](),
        );
  // k-way merge in the read order, without duplicates. A reader advances only after its head was
  // consumed, so no partition is read further than the page needs.
  const heads = await Promise.all(readers.map((r) => r.next()));
  const first = (a: string, b: string) => (order.forward ? a < b : a > b);
  let last: string | undefined;
  let consumed = -1;
  for (;;) {
    if (consumed >= 0) heads[consumed] = await readers[consumed]!.next();
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h.done) continue;
      if (best < 0 || first(String(h.value.sk), String((heads[best]!.value as Record<string, unknown>).sk))) best = i;
    }
    if (best < 0) return;
    const value = heads[best]!.value as Record<string, unknown>;
    consumed = best;
    const position = String(value.sk);
    if (beyond(position)) return;
    if (position === last) continue;
    last = position;
    yield { position, id: String(value.id) };
  }
}

/**
 * One value's sort-ordered entries (`prefix`: `v<value>\u0001`) in position order, strictly beyond
 * `start`, yielded as index entries are (`sk`: the position).
 */
async function* readValue(pk: string, prefix: string, start: string | undefined, pageSize: number, forward: boolean): AsyncGenerator<Record<string, unknown>> {
  const from = forward && start !== undefined ? prefix + start : prefix;
  const to = !forward && start !== undefined ? prefix + start : prefix + TOP;
  // The range bound by a position holds that position's own entry (BETWEEN is inclusive): one more.
  for await (const item of readRange(pk, from, to, forward, pageSize + (start === undefined ? 0 : 1), pageSize)) {
    const position = String(item.sk).slice(prefix.length);
    if (position !== start) yield { sk: position, id: item.id };
  }
}

/**
 * The items of partition `pk` whose sort keys are from `from` to `to` (inclusive), in order
 * (`forward`: ascending), `first` on the first query and `pageSize` on each next one.
 */
async function* readRange(pk: string, from: string, to: string, forward: boolean, first: number, pageSize: number): AsyncGenerator<Record<string, unknown>> {
  let limit = first;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand({ TableName: tableName(), ...partition(pk, ['between', from, to]), ScanIndexForward: forward, Limit: limit, ExclusiveStartKey: startKey }));
    limit = pageSize;
    yield* out.Items ?? [];
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/**
 * The driver of an `eq` or `in` condition on a sorted field: its values' entries (none: nothing
 * can match); of `not_exists`: its empty section; a stage's records for an `eq` on `stage_id`.
 */
function valuesDriver(type: EntityType, accountId: string, read: SortedRead): Driver | 'empty' {
  if (read.condition?.op === 'not_exists') return { kind: 'values', partition: keys.sortedPartition(accountId, type, read.field), prefixes: [keys.sortedEmpty('')] };
  if (read.field === TABLE_DEFINITION.gsi2.stageField && read.condition?.op === 'eq' && typeof read.condition.value === 'string' && read.condition.value !== '') return { kind: 'stage', stageId: read.condition.value };
  const values = read.condition?.op === 'in' ? (read.condition.value as unknown[]) : [read.condition?.value];
  const prefixes = values.flatMap((x) => {
    const enc = sortKeyOf(read.type, x);
    return enc === undefined ? [] : [keys.sortedValue(enc, '')];
  });
  return prefixes.length ? { kind: 'values', partition: keys.sortedPartition(accountId, type, read.field), prefixes } : 'empty';
}

/**
 * The newest `limit` records of one pipeline stage (GSI2: the records themselves, newest first,
 * as an `eq` on `stage_id` lists them): one Query of `limit` items (`read`: the items it read).
 */
export async function stageRecords(type: EntityType, accountId: string, stageId: string, limit: number): Promise<{ items: StoredRecord[]; read: number }> {
  const g = TABLE_DEFINITION.gsi2;
  const out = await db().send(
    new QueryCommand({ TableName: tableName(), IndexName: g.name, ...partition(keys.stagePartition(accountId, type, stageId), undefined, { pk: g.partitionKey, sk: g.sortKey }), ScanIndexForward: false, Limit: limit }),
  );
  const items = (out.Items ?? []) as StoredRecord[];
  return { items, read: out.ScannedCount ?? items.length };
}

/**
 * Counts a partition's entries below `after`, reading at most `limit`: `exhausted` when the
 * partition holds no more than that. Used to pick the most selective index for a list.
 */
export async function probePartition(type: EntityType, accountId: string, name: string, after: string | undefined, limit: number): Promise<{ count: number; exhausted: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: partitionTableName(name),
      ...afterCursor(keys.indexPartition(accountId, type, name), after),
      Select: 'COUNT',
      Limit: limit,
    }),
  );
  return { count: out.Count ?? 0, exhausted: !out.LastEvaluatedKey };
}

interface ListArgs {
  accountId: string;
  driver: Driver;
  /** Re-checks a fetched record against every filter of the request. */
  matches?: (record: StoredRecord) => boolean;
  /** Awaited before the first re-check (lets the account's meta read overlap the first query). */
  ready?: Promise<unknown>;
  /** Position (exclusive) to continue after. */
  after?: string;
  limit: number;
  /** Newest first (default) or oldest first, within a window of positions. */
  order?: ReadOrder;
  /**
   * Items (index entries and records) the page may read (contract §17: conditions no index
   * serves); when it runs out first, the page is what was found and `next` continues the read.
   */
  budget?: number;
}

export interface ListPage {
  items: StoredRecord[];
  /** Position of the last item when more matching items exist. */
  next?: string;
  /** Items read (index entries and records). */
  read?: number;
}

/** Candidates read per query when the page re-checks conditions no index serves. */
const BUDGET_PAGE_SIZE = 100;

async function listRecords(type: EntityType, args: ListArgs): Promise<ListPage> {
  const want = args.limit + 1;
  const matches = args.matches ?? (() => true);
  const out: StoredRecord[] = [];
  const budget = args.budget ?? Infinity;
  // A budgeted page reads ahead (its re-check may drop many); a value's entries all match their condition: no more than the page.
  const pageSize = args.budget && args.driver.kind !== 'values' && args.driver.kind !== 'stage' ? BUDGET_PAGE_SIZE : want;
  const stream = candidates(type, args.accountId, args.driver, args.after, pageSize, args.order)[Symbol.asyncIterator]();
  let exhausted = false;
  let read = 0;
  let lastSeen: string | undefined;
  while (out.length < want && !exhausted && read + 2 <= budget) {
    const batch: Candidate[] = [];
    // A candidate costs up to 2 items (an entry and its record): never past the budget.
    while (batch.length < want - out.length && read + 2 <= budget) {
      const n = await stream.next();
      if (n.done) {
        exhausted = true;
        break;
      }
      batch.push(n.value);
      read += n.value.item ? 1 : 2;
      lastSeen = n.value.position;
    }
    const missing = batch.filter((c) => !c.item).map((c) => c.id);
    const [fetched] = await Promise.all([missing.length ? batchGetRecords(type, args.accountId, missing) : new Map<string, StoredRecord>(), args.ready]);
    for (const c of batch) {
      const record = c.item ?? fetched.get(c.id);
      if (record && positionOf(record) === c.position && matches(record)) out.push(record);
    }
  }
  await stream.return?.(undefined);
  if (out.length > args.limit) return { ...pageOf(out, args.limit, positionOf), read };
  // The budget ran out before the page was full: what was found, and the place to go on from.
  if (!exhausted && out.length < want && read + 2 > budget) return { items: out, next: lastSeen, read };
  return { items: out, read };
}

/** A residual condition on the record as the API shows it: `hasAll` (an array field holds every value), `in` (the field, or one of its ids, is one of the values), `eq`. */
export interface Predicate {
  field: string;
  op: 'hasAll' | 'in' | 'eq';
  values: unknown[];
}

/** What a list reads, described by the domain and run by the data layer. */
export interface ListPlan {
  /** Index options, each a union of partitions that holds every match, in order of preference; none: the account's whole list. */
  options: IndexOption[];
  /** Conditions every returned record meets (re-checked: index entries may lag their record). */
  where: Predicate[];
  /** The search every returned record matches: its words (or phone digits, or exact email in `emailField`). */
  search?: { query: SearchQuery; emailField?: string };
  /** `filter` and `sort` (contract §17), parsed by the domain, with the types of the fields they name. */
  query?: { filter?: Filter; sort?: Sort; fields: Readonly<Record<string, FilterField>> };
  /** Oldest first (a `created_at` `asc` sort) and the window of positions `created_at` conditions allow. */
  order?: ReadOrder;
  /** The sort, served by its field's sort-ordered entries (contract §17). */
  sorted?: SortedRead;
  /** Conditions on fields with sort-ordered entries, most selective first: the first whose entries number at most NARROW_LIMIT drives a page in the list's own order. */
  narrow?: SortedRead[];
  /** Position (exclusive) to continue after. */
  after?: string;
  limit: number;
}

export interface PlannedPage extends ListPage {
  /** The account's meta the page was checked with (for shaping its records). */
  meta: AccountMeta;
  /** A sort no index serves met more than SORT_LIMIT records: the page was not read. */
  tooLarge?: true;
}

/** Items a page reads at most when conditions no index serves are re-checked (contract §17). */
export const READ_BUDGET = 1_000;
/** Records a sort that no index serves reads at most (contract §17: beyond, `sort_too_large`). */
export const SORT_LIMIT = 10_000;

const arrayOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function holds(p: Predicate, view: Record<string, unknown>): boolean {
  const v = view[p.field];
  if (p.op === 'hasAll') return p.values.every((x) => arrayOf(v).includes(x));
  if (p.op === 'eq') return p.values.length === 1 && v === p.values[0];
  return Array.isArray(v) ? p.values.some((x) => v.includes(x)) : p.values.includes(v);
}

/** A record's field as `filter` and `sort` read it: the API view, or a visible custom field value. */
function fieldReader(view: Record<string, unknown>, record: StoredRecord, meta: AccountMeta) {
  return (field: string): unknown => {
    if (!field.startsWith(CUSTOM_FIELD_PREFIX)) return view[field];
    const id = field.slice(CUSTOM_FIELD_PREFIX.length);
    const cf = record.custom_fields as Record<string, unknown> | undefined;
    return meta.deletedFields.has(id) || !cf ? undefined : cf[id];
  };
}

/** The re-check of a plan (undefined when it has no condition: every candidate is a match). */
function recheck(def: EntityDefinition, plan: ListPlan, meta: () => AccountMeta): ((r: StoredRecord) => boolean) | undefined {
  const filter = plan.query?.filter;
  if (plan.where.length === 0 && !plan.search && !filter) return undefined;
  const { search } = plan;
  return (r) => {
    const view = currentView(def, r, meta());
    if (!plan.where.every((p) => holds(p, view))) return false;
    if (filter && !matchesFilter(filter, plan.query!.fields, fieldReader(view, r, meta()))) return false;
    return !search || matchesQuery(searchWords(def, view), search.query, search.emailField ? String(r[search.emailField] ?? '') : undefined);
  };
}

/** Picks the option to read (shared/search/index-choice.ts) after counting what it asks for. */
async function chooseDriver(type: EntityType, accountId: string, options: readonly IndexOption[], after: string | undefined, want: number): Promise<Driver | 'empty'> {
  const unique = distinctOptions(options);
  if (unique.length === 0) return { kind: 'all' };
  if (unique.length === 1) return { kind: 'index', names: unique[0]!.names };
  const { probe, sized } = measurements(unique);
  const [probed, sizes] = await Promise.all([
    Promise.all(
      unique.map(async (option) => {
        if (!probe(option)) return { option, count: Infinity, exhausted: false };
        const parts = await Promise.all(option.names.map((n) => probePartition(type, accountId, n, after, want)));
        return { option, count: parts.reduce((n, p) => n + p.count, 0), exhausted: parts.every((p) => p.exhausted) };
      }),
    ),
    sized.length ? estimatePartitionSizes(type, accountId, sized.flatMap((o) => o.names)) : undefined,
  ]);
  const chosen = pickOption(unique, probed, sizes, sized, want);
  return chosen === 'empty' ? 'empty' : { kind: 'index', names: chosen.names };
}

/**
 * A page in an order no index serves (contract §17): every record the driver yields is read (at
 * most SORT_LIMIT), the matches are ordered, and the page is the `limit` after the position.
 */
async function sortedPage(def: EntityDefinition, accountId: string, plan: ListPlan, sort: Sort, driver: Driver, ready: Promise<AccountMeta>): Promise<Omit<PlannedPage, 'meta'>> {
  const type = def.type as EntityType;
  const meta = await ready;
  const matches = recheck(def, plan, () => meta) ?? (() => true);
  const found: { record: StoredRecord; at: SortPosition }[] = [];
  const stream = candidates(type, accountId, driver, undefined, 1_000, plan.order)[Symbol.asyncIterator]();
  let read = 0;
  let batch: Candidate[] = [];
  const flush = async () => {
    const missing = batch.filter((c) => !c.item).map((c) => c.id);
    const fetched = missing.length ? await batchGetRecords(type, accountId, missing) : new Map<string, StoredRecord>();
    for (const c of batch) {
      const record = c.item ?? fetched.get(c.id);
      if (!record || positionOf(record) !== c.position || !matches(record)) continue;
      const view = currentView(def, record, meta);
      found.push({ record, at: sortPosition(plan.query!.fields[sort.field]!.type, fieldReader(view, record, meta)(sort.field), positionOf(record)) });
    }
    batch = [];
  };
  for (;;) {
    const n = await stream.next();
    if (n.done) break;
    if (++read > SORT_LIMIT) {
      await stream.return?.(undefined);
      return { items: [], tooLarge: true };
    }
    batch.push(n.value);
    if (batch.length >= 100) await flush();
  }
  await flush();
  const after = plan.after === undefined ? undefined : (JSON.parse(plan.after) as SortPosition);
  const rest = found.filter((x) => !after || compareSort(x.at, after, sort.direction) > 0).sort((a, b) => compareSort(a.at, b.at, sort.direction));
  const page = rest.slice(0, plan.limit);
  return { items: page.map((x) => x.record), read, ...(rest.length > plan.limit ? { next: JSON.stringify(page[page.length - 1]!.at) } : {}) };
}

// --- sort-ordered entries (contract §17) ---------------------------------------------------------

/** A read of a field's sort-ordered entries: in its order (`direction`), bounded by a condition on it. */
export interface SortedRead {
  field: string;
  type: FieldType;
  direction?: 'asc' | 'desc';
  /** An `eq`, `in`, `prefix` or range condition on the field: only its entries are read (empty values never match one). */
  condition?: Condition;
}

/** Entries a condition may have for it to drive a page in the list's own order (read whole, then ordered by position). */
export const NARROW_LIMIT = 200;

interface KeyRange {
  from: string;
  to: string;
}

const TOP = keys.sortedTop;

/** The ranges of sort keys that hold every record meeting `c` (loose bounds: the re-check is exact), in ascending order; with no condition, every value then the empty section. */
export function sortedRanges(type: FieldType, c: Condition | undefined): KeyRange[] {
  const enc = (x: unknown) => sortKeyOf(type, x) ?? '';
  const exactly = (x: unknown) => ({ from: keys.sortedValue(enc(x), ''), to: keys.sortedValue(enc(x), '') + TOP });
  const values = { from: keys.sortedValuesFrom, to: keys.sortedValuesFrom + TOP };
  if (!c) return [values, { from: keys.sortedEmptyFrom, to: keys.sortedEmptyFrom + TOP }];
  switch (c.op) {
    case 'eq':
      return [exactly(c.value)];
    case 'in': {
      const all = [...new Map((c.value as unknown[]).map((x) => [enc(x), exactly(x)])).values()];
      return all.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
    }
    case 'prefix':
      return [{ from: keys.sortedValueOf(enc(c.value)), to: keys.sortedValueOf(enc(c.value)) + TOP }];
    case 'gt':
    case 'gte':
      return [{ from: keys.sortedValueOf(enc(c.value)), to: values.to }];
    case 'lt':
    case 'lte':
      return [{ from: values.from, to: keys.sortedValue(enc(c.value), '') + TOP }];
    case 'between': {
      const [a, b] = c.value as [unknown, unknown];
      return [{ from: keys.sortedValueOf(enc(a)), to: keys.sortedValue(enc(b), '') + TOP }];
    }
    default:
      return [values, { from: keys.sortedEmptyFrom, to: keys.sortedEmptyFrom + TOP }];
  }
}

interface SortedEntry {
  at: string;
  id: string;
  pos: string;
}

/** The entries of a sorted field within `ranges`, in the read's direction, strictly beyond `after`. */
async function* sortedEntries(type: EntityType, accountId: string, read: SortedRead, after: string | undefined, firstPage: number, pageSize = firstPage): AsyncGenerator<SortedEntry> {
  // The range bound by a cursor holds the cursor's own entry (BETWEEN is inclusive): one more.
  let limit = firstPage + (after === undefined ? 0 : 1);
  const forward = read.direction !== 'desc';
  const ranges = sortedRanges(read.type, read.condition);
  // Values in the read's direction; the empty section (when read) last either way.
  const values = ranges.filter((r) => r.from !== keys.sortedEmptyFrom);
  if (!forward) values.reverse();
  ranges.splice(0, ranges.length, ...values, ...ranges.filter((r) => r.from === keys.sortedEmptyFrom));
  const pk = keys.sortedPartition(accountId, type, read.field);
  const cursorInEmpty = after !== undefined && after.startsWith(keys.sortedEmptyFrom);
  for (const r of ranges) {
    let { from, to } = r;
    const isEmpty = r.from === keys.sortedEmptyFrom;
    // A cursor in the empty section: every value was read. A cursor among the values bounds them only.
    if (cursorInEmpty && !isEmpty) continue;
    const bound = after !== undefined && isEmpty === cursorInEmpty ? after : undefined;
    if (bound !== undefined) {
      if (forward ? bound >= to : bound <= from) continue;
      if (forward && bound > from) from = bound;
      if (!forward && bound < to) to = bound;
    }
    // An empty range (`between` of a larger value and a smaller one): DynamoDB refuses it.
    if (from > to) continue;
    for await (const item of readRange(pk, from, to, forward, limit, pageSize)) {
      const at = String(item.sk);
      if (at !== after) yield { at, id: String(item.id), pos: String(item.pos) };
    }
    limit = pageSize;
  }
}

/** Whether a record read through an entry still holds the entry's value (entries of an older value are skipped). */
const holdsEntry = (read: SortedRead, record: StoredRecord, at: string) => sortedKeyOf(read.type, sortedFieldValue(record, read.field), positionOf(record)) === at;

/**
 * A page in a sorted field's order (contract §17): its entries are read in order, the records
 * fetched (BatchGetItem) and re-checked; at most READ_BUDGET items (entries and records) a page:
 * when the budget runs out first, the page is what was found and its cursor the last entry read.
 */
async function sortedIndexPage(def: EntityDefinition, accountId: string, plan: ListPlan, read: SortedRead, matches: ((r: StoredRecord) => boolean) | undefined, ready: Promise<unknown>): Promise<ListPage> {
  const type = def.type as EntityType;
  const want = plan.limit + 1;
  const out: { record: StoredRecord; at: string }[] = [];
  // The first query reads what a page needs; later ones (conditions dropping entries) read more at once.
  const stream = sortedEntries(type, accountId, read, plan.after, want, matches ? BUDGET_PAGE_SIZE : want)[Symbol.asyncIterator]();
  let read_ = 0;
  let exhausted = false;
  let lastSeen: string | undefined;
  while (out.length < want && !exhausted && read_ < READ_BUDGET) {
    const batch: SortedEntry[] = [];
    while (batch.length < want - out.length && read_ < READ_BUDGET) {
      const n = await stream.next();
      if (n.done) {
        exhausted = true;
        break;
      }
      batch.push(n.value);
      read_ += 2;
      lastSeen = n.value.at;
    }
    const [fetched] = await Promise.all([batch.length ? batchGetRecords(type, accountId, batch.map((e) => e.id)) : new Map<string, StoredRecord>(), ready]);
    for (const e of batch) {
      const record = fetched.get(e.id);
      if (record && holdsEntry(read, record, e.at) && (!matches || matches(record))) out.push({ record, at: e.at });
    }
  }
  await stream.return?.(undefined);
  if (out.length > plan.limit) {
    const page = pageOf(out, plan.limit, (x) => x.at);
    return { items: page.items.map((x) => x.record), next: page.next, read: read_ };
  }
  if (!exhausted && read_ >= READ_BUDGET) return { items: out.map((x) => x.record), next: lastSeen, read: read_ };
  return { items: out.map((x) => x.record), read: read_ };
}

/**
 * A page in the list's own order (`created_at`) driven by a condition on a sorted field: its
 * entries (at most NARROW_LIMIT, else undefined: another driver reads the page) are ordered by
 * the position they carry, and the records are fetched in that order and re-checked.
 */
async function narrowedPage(def: EntityDefinition, accountId: string, plan: ListPlan, read: SortedRead, matches: ((r: StoredRecord) => boolean) | undefined, ready: Promise<unknown>): Promise<{ page: ListPage } | { spent: number }> {
  const type = def.type as EntityType;
  const entries: SortedEntry[] = [];
  for await (const e of sortedEntries(type, accountId, read, undefined, NARROW_LIMIT + 1)) {
    entries.push(e);
    if (entries.length > NARROW_LIMIT) return { spent: entries.length };
  }
  const order = plan.order ?? { forward: false };
  const { start, beyond } = windowOf(order, plan.after);
  const positions = [...new Map(entries.map((e) => [e.pos, e])).values()]
    .filter((e) => !beyond(e.pos) && (start === undefined || (order.forward ? e.pos > start : e.pos < start)))
    .sort((a, b) => (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0));
  if (!order.forward) positions.reverse();
  const want = plan.limit + 1;
  const out: StoredRecord[] = [];
  let read_ = entries.length;
  let i = 0;
  while (out.length < want && i < positions.length) {
    const batch = positions.slice(i, i + want - out.length);
    i += batch.length;
    read_ += batch.length;
    const [fetched] = await Promise.all([batchGetRecords(type, accountId, batch.map((e) => e.id)), ready]);
    for (const e of batch) {
      const record = fetched.get(e.id);
      if (record && positionOf(record) === e.pos && (!matches || matches(record))) out.push(record);
    }
  }
  return { page: { ...pageOf(out, plan.limit, positionOf), read: read_ } };
}

/** Runs a list plan: one page of records (newest first, or in the plan's sort) and the meta they were checked with (`preloaded`: read by the planner). */
export async function runListPlan(def: EntityDefinition, accountId: string, plan: ListPlan, preloaded?: AccountMeta): Promise<PlannedPage> {
  const type = def.type as EntityType;
  let meta!: AccountMeta;
  const ready = (preloaded ? Promise.resolve(preloaded) : readMeta(accountId)).then((m) => (meta = m));
  const sort = plan.query?.sort;
  const matches = recheck(def, plan, () => meta);
  // A sort a field's sort-ordered entries serve: read them in order. With index filters (tags,
  // references, search) the matches of the smallest are sorted in memory when they are at most
  // SORT_LIMIT (full, exact pages; their cursor is `[value, id]`, and goes on in memory).
  if (plan.sorted && !plan.after?.startsWith('[')) {
    if (plan.options.length > 0 && plan.after === undefined && sort) {
      const driver = await chooseDriver(type, accountId, plan.options, undefined, plan.limit + 1);
      if (driver === 'empty') return { items: [], meta: await ready };
      const page = await sortedPage(def, accountId, plan, sort, driver, ready);
      if (!page.tooLarge) return { ...page, meta: await ready };
    }
    const page = await sortedIndexPage(def, accountId, plan, plan.sorted, matches, ready);
    return { ...page, meta: await ready };
  }
  // Entries read by conditions that turned out too broad to drive the page: the rest of the page's budget is what is left.
  let spent = 0;
  if (!sort) {
    for (const read of plan.narrow ?? []) {
      // An `eq`, `in` or `not_exists`: its values' entries (the empty section's), in the list's own order, give full pages at any size.
      if (read.condition?.op === 'eq' || read.condition?.op === 'in' || read.condition?.op === 'not_exists') {
        const driver = valuesDriver(type, accountId, read);
        if (driver === 'empty') return { items: [], meta: await ready };
        const page = await listRecords(type, { accountId, driver, matches, ready, after: plan.after, limit: plan.limit, ...(plan.order ? { order: plan.order } : {}), budget: READ_BUDGET - spent });
        return { ...page, meta: await ready };
      }
      const tried = await narrowedPage(def, accountId, plan, read, matches, ready);
      if ('page' in tried) return { ...tried.page, meta: await ready };
      spent += tried.spent;
    }
  }
  const driver = await chooseDriver(type, accountId, plan.options, sort || plan.order?.forward ? undefined : plan.after, plan.limit + 1);
  if (driver === 'empty') return { items: [], meta: await ready };
  if (sort) {
    const page = await sortedPage(def, accountId, plan, sort, driver, ready);
    return { ...page, meta: await ready };
  }
  const budget = plan.query?.filter ? READ_BUDGET - spent : undefined;
  const page = await listRecords(type, { accountId, driver, matches, ready, after: plan.after, limit: plan.limit, ...(plan.order ? { order: plan.order } : {}), ...(budget ? { budget } : {}) });
  await ready;
  return { ...page, meta };
}
