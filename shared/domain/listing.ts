import { cursorKey, decodeCursor, encodeCursor } from '../db/cursor.js';
import { type Driver, listRecords, type StoredRecord } from '../db/records.js';
import type { EntityType } from '../db/table.js';
import { ApiError, type Family } from '../http/errors.js';
import type { OperationContext } from '../http/operation.js';
import { indexPrefixes, prefixFor, type SearchQuery } from '../search/tokenize.js';

export const DEFAULT_LIMIT = 25;

/** A record never has more search partitions than this (keeps every write inside one transaction). */
export const MAX_SEARCH_PREFIXES = 40;

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
  driver: Driver;
  matches?: (record: StoredRecord) => boolean;
}

/** One page of a list, with the contract's cursor rules (§4). */
export async function page<T>(ctx: OperationContext, req: PageRequest, toApi: (r: StoredRecord) => T): Promise<Page<T>> {
  const key = await cursorKey();
  const scope = { accountId: ctx.accountId, operation: ctx.operation, filters: req.filters };
  let after: string | undefined;
  if (req.cursor !== undefined && req.cursor !== '') {
    after = decodeCursor(req.cursor, scope, key);
    if (after === undefined) throw new ApiError(`${req.family}.invalid_cursor`, 'cursor is invalid for this request');
  }
  const result = await listRecords(req.type, {
    accountId: ctx.accountId,
    driver: req.driver,
    matches: req.matches,
    after,
    limit: req.limit ?? DEFAULT_LIMIT,
  });
  return { items: result.items.map(toApi), next_cursor: result.next ? encodeCursor(result.next, scope, key) : '' };
}

/** Index partition names of a record's words (capped, deterministic order). */
export function searchIndexNames(wordSet: Iterable<string>): string[] {
  return [...indexPrefixes(wordSet)].sort().slice(0, MAX_SEARCH_PREFIXES).map((p) => `w#${p}`);
}

/**
 * The partitions that hold every record a query can match: the longest query word's prefix
 * partition (all words must match), plus the phone digits' partition for phone-like queries
 * (which also match by the phone rule). Undefined when no word is long enough to be indexed.
 */
export function searchDriver(query: SearchQuery): string[] | undefined {
  const longest = [...query.words].sort((a, b) => [...b].length - [...a].length)[0];
  const wordPrefix = longest ? prefixFor(longest) : undefined;
  if (query.phoneDigits) {
    const phonePrefix = prefixFor(query.phoneDigits);
    if (!wordPrefix && query.words.length > 0) return undefined;
    return [phonePrefix!, ...(wordPrefix ? [wordPrefix] : [])].map((p) => `w#${p}`);
  }
  return wordPrefix ? [`w#${wordPrefix}`] : undefined;
}

export const tagNames = (tags: unknown) => (Array.isArray(tags) ? tags.map((t) => `t#${t}`) : []);

export function canonicalSearch(search: string | undefined): string {
  return (search ?? '').trim().normalize('NFKD').toLowerCase();
}
