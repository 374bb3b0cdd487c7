import { cursorKey, decodeCursor, encodeCursor } from '../db/cursor.js';
import type { StoredRecord } from '../db/items.js';
import { type Driver, listRecords, probePartition } from '../db/lists.js';
import { estimatePartitionSizes } from '../db/search.js';
import { type EntityType, indexName } from '../db/table.js';
import { ApiError, type Family } from '../errors.js';
import type { OperationContext } from './context.js';
import { indexPrefixes, prefixFor, type SearchQuery } from '../search/tokenize.js';

export const DEFAULT_LIMIT = 25;

/**
 * A record never has more search entries than this (shortest prefixes first, so every word stays
 * findable by its first characters). Contacts of ordinary size have 30–60.
 */
export const MAX_SEARCH_PREFIXES = 300;

export interface Page<T> {
  items: T[];
  next_cursor: string;
}

export interface PageRequest {
  type: EntityType;
  family: Family;
  cursor?: string;
  limit?: number;
  /** Canonical filters: part of the cursor's scope. */
  filters: unknown;
  /**
   * Index options, each a union of partitions that holds every match (a necessary condition),
   * in order of preference; none means the whole list.
   */
  drivers: string[][];
  matches?: (record: StoredRecord) => boolean;
  /** Reads the caller needs before re-checking or shaping records; overlapped with the first query. */
  ready?: Promise<unknown>;
}

export interface CursorScope {
  /** The position (exclusive) to continue after; undefined for the first page. */
  after: string | undefined;
  /** `next_cursor` for a page whose last item is at `position` ("" when there is no next page). */
  next(position: string | undefined): string;
}

/**
 * The contract's cursor rules (§4) for one request: a cursor is valid only for the same account,
 * operation and (canonical) filters, else `<family>.invalid_cursor`. Every paginated list uses it.
 */
export async function cursorScope(ctx: OperationContext, family: Family, cursor: string | undefined, filters: unknown): Promise<CursorScope> {
  const key = await cursorKey();
  const scope = { accountId: ctx.accountId, operation: ctx.operation, filters };
  let after: string | undefined;
  if (cursor !== undefined && cursor !== '') {
    after = decodeCursor(cursor, scope, key);
    if (after === undefined) throw new ApiError(`${family}.invalid_cursor`, 'cursor is invalid for this request');
  }
  return { after, next: (position) => (position ? encodeCursor(position, scope, key) : '') };
}

/** One page of a list, with the contract's cursor rules (§4). */
export async function page<T>(ctx: OperationContext, req: PageRequest, toApi: (r: StoredRecord) => T): Promise<Page<T>> {
  const { after, next } = await cursorScope(ctx, req.family, req.cursor, req.filters);
  const limit = req.limit ?? DEFAULT_LIMIT;
  const driver = await chooseDriver(req.type, ctx.accountId, req.drivers, after, limit + 1);
  if (driver === 'empty') return { items: [], next_cursor: '' };
  const result = await listRecords(req.type, {
    accountId: ctx.accountId,
    driver,
    matches: req.matches,
    ready: req.ready,
    after,
    limit,
  });
  await req.ready;
  return { items: result.items.map(toApi), next_cursor: next(result.next) };
}

/** Options with more partitions than this are not probed (they stay eligible as a fallback). */
const MAX_PROBED_PARTITIONS = 3;

/**
 * Picks the index to read: every option is a superset of the matches, so the smallest one
 * wins. Small options are found by counting at most one page of each (a few cheap COUNT
 * queries); an option found empty means the page is empty. When every option holds more than a
 * page, the search options (several query words) are compared by their partitions' sampled
 * sizes (shared/db/search.ts) and the rarest word's partition is read; otherwise the first
 * (preferred) option is read.
 */
export async function chooseDriver(type: EntityType, accountId: string, options: string[][], after: string | undefined, want: number): Promise<Driver | 'empty'> {
  const unique = options.filter((o, i) => o.length > 0 && options.findIndex((x) => x.join() === o.join()) === i);
  if (unique.length === 0) return { kind: 'all' };
  if (unique.length === 1) return { kind: 'index', names: unique[0]! };
  const counted = unique[0]!.every(indexName.isWord) ? unique.filter((o) => o.every(indexName.isWord)) : [];
  const [probed, sizes] = await Promise.all([
    Promise.all(
      unique.map(async (names) => {
        if (names.length > MAX_PROBED_PARTITIONS) return { names, count: Infinity, exhausted: false };
        const parts = await Promise.all(names.map((n) => probePartition(type, accountId, n, after, want)));
        return { names, count: parts.reduce((n, p) => n + p.count, 0), exhausted: parts.every((p) => p.exhausted) };
      }),
    ),
    counted.length > 1 ? estimatePartitionSizes(type, accountId, counted.flat()) : undefined,
  ]);
  const small = probed.filter((p) => p.exhausted).sort((a, b) => a.count - b.count)[0];
  if (small) return small.count === 0 ? 'empty' : { kind: 'index', names: small.names };
  if (sizes) {
    // Each of these partitions holds at least `want` entries (the probe was not exhausted).
    const size = (names: string[]) => names.reduce((n, name) => n + Math.max(sizes.get(name) ?? 0, want), 0);
    const rarest = [...counted].sort((a, b) => size(a) - size(b))[0]!;
    return { kind: 'index', names: rarest };
  }
  return { kind: 'index', names: unique[0]! };
}

/** Index partition names of a record's words (capped, deterministic order). */
export function searchIndexNames(wordSet: Iterable<string>): string[] {
  const prefixes = [...indexPrefixes(wordSet)].sort((a, b) => [...a].length - [...b].length || (a < b ? -1 : a > b ? 1 : 0));
  return prefixes.slice(0, MAX_SEARCH_PREFIXES).map(indexName.word);
}

/**
 * Index options of a search, longest word first: each query word's prefix partition holds every
 * record the query can match (all words must match). A phone-like query also matches by the
 * phone rule, so its options are unions of the phone digits' partition and a word's partition.
 * Words shorter than 3 characters are not indexed (no option).
 */
export function searchDrivers(query: SearchQuery): string[][] {
  if (query.email !== undefined) return [[indexName.email(query.email)]];
  const prefixes = [...new Set([...query.words].sort((a, b) => [...b].length - [...a].length).map(prefixFor).filter((p): p is string => Boolean(p)))];
  if (!query.phoneDigits) return prefixes.map((p) => [indexName.word(p)]);
  const phone = indexName.word(prefixFor(query.phoneDigits)!);
  // Every query word must be indexable for the word rule to be bounded by one of them.
  if (query.words.some((w) => !prefixFor(w))) return [];
  return prefixes.length ? prefixes.map((p) => [...new Set([phone, indexName.word(p)])]) : [[phone]];
}

export function canonicalSearch(search: string | undefined): string {
  return (search ?? '').trim().normalize('NFKD').toLowerCase();
}
