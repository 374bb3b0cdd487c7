/**
 * Upgrade command: rekeys the sort-ordered entries (contract §17) written by a version that
 * ordered a value's entries by id, so that they are ordered by created_at, then id (full pages for
 * `eq` and `in`, ties in creation order: docs/deploy.md, "Upgrading a stack").
 *
 *   npm run rekey-sorted-entries -- --table <table> [--endpoint http://127.0.0.1:8000] [--segments 4]
 *
 * With `--endpoint` it works on that DynamoDB (Local); else on AWS with the usual credential chain.
 * It scans the whole table (the platform's credentials, not a function's). Idempotent.
 */
import { rekeySortedEntries } from '../shared/db/sorted-index.js';
import { progress, upgradeArgs } from './upgrade-command.js';

const args = upgradeArgs('npm run rekey-sorted-entries -- --table <table> [--endpoint URL] [--segments 4]');
const done = await rekeySortedEntries({
  table: args.table,
  segments: args.segments,
  onPage: progress((p) => `scanned ${p.scanned} items, rekeyed ${p.rekeyed}`),
});
console.log(`done: scanned ${done.scanned} items of ${args.table}, rekeyed ${done.rekeyed} sorted entries`);
