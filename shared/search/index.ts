/**
 * Search (contract §4), in one module: tokenizing (`tokenize.ts`: words, phone digits, query
 * parsing, the re-check `matchesQuery`), prefixes (`prefixes.ts`: a record's indexed prefixes, a
 * query's partitions) and the choice of the index a list reads (`index-choice.ts`). Pure: the
 * data layer reads and writes the entries it is told (shared/db/search.ts, shared/db/lists.ts).
 */
export * from './tokenize.js';
export * from './prefixes.js';
export * from './index-choice.js';
