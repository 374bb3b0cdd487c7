/**
 * Search prefixes: which prefixes of a record's words it is indexed by (written as search
 * entries by the record store), and which prefix partitions a query's words are found in.
 * Prefixes are plain strings here; the data layer names their partitions (`indexName.word`).
 */
import { indexPrefixes, prefixFor, type SearchQuery } from './tokenize.js';

/**
 * A record never has more search entries than this (shortest prefixes first, so every word stays
 * findable by its first characters). Contacts of ordinary size have 30–60.
 */
export const MAX_SEARCH_PREFIXES = 300;

/** The prefixes a record's words are indexed by (capped, deterministic order: shortest first, then by code unit). */
export function recordPrefixes(wordSet: Iterable<string>): string[] {
  const prefixes = [...indexPrefixes(wordSet)].sort((a, b) => [...a].length - [...b].length || (a < b ? -1 : a > b ? 1 : 0));
  return prefixes.slice(0, MAX_SEARCH_PREFIXES);
}

/** One partition a search can read: a word prefix's, or the exact email lookup's. */
export type SearchKey = { kind: 'prefix'; prefix: string } | { kind: 'email'; email: string };

/**
 * Index options of a search, longest word first: each query word's prefix partition holds every
 * record the query can match (all words must match). A phone-like query also matches by the
 * phone rule, so its options are unions of the phone digits' partition and a word's partition.
 * Words shorter than 3 characters are not indexed (no option).
 */
export function searchOptions(query: SearchQuery): SearchKey[][] {
  if (query.email !== undefined) return [[{ kind: 'email', email: query.email }]];
  const key = (prefix: string): SearchKey => ({ kind: 'prefix', prefix });
  const prefixes = [...new Set([...query.words].sort((a, b) => [...b].length - [...a].length).map(prefixFor).filter((p): p is string => Boolean(p)))];
  if (!query.phoneDigits) return prefixes.map((p) => [key(p)]);
  const phone = prefixFor(query.phoneDigits)!;
  // Every query word must be indexable for the word rule to be bounded by one of them.
  if (query.words.some((w) => !prefixFor(w))) return [];
  return prefixes.length ? prefixes.map((p) => [...new Set([phone, p])].map(key)) : [[key(phone)]];
}

/** The search string as part of a cursor's scope. */
export function canonicalSearch(search: string | undefined): string {
  return (search ?? '').trim().normalize('NFKD').toLowerCase();
}
