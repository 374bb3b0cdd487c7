/**
 * Upgrade command: gives the records written before a field joined their family's sorted fields
 * (owners of contacts, companies and projects; assignees of activities) their sort-ordered
 * entries of it (contract §17: `owner_id: "none"`, a filter or sort on the field; docs/deploy.md,
 * "Upgrading a stack deployed before owners and assignees").
 *
 *   npm run place-sorted-entries -- --table <table> [--endpoint http://127.0.0.1:8000] [--segments 4]
 *
 * With `--endpoint` it works on that DynamoDB (Local); else on AWS with the usual credential chain.
 * It scans the whole table (the platform's credentials, not a function's). Idempotent.
 */
import { placeSortedEntries } from '../shared/db/sorted-index.js';
import { progress, upgradeArgs } from './upgrade-command.js';

const args = upgradeArgs('npm run place-sorted-entries -- --table <table> [--endpoint URL] [--segments 4]');
const done = await placeSortedEntries({
  table: args.table,
  segments: args.segments,
  onPage: progress((p) => `scanned ${p.scanned} items, placed ${p.placed}`),
});
console.log(`done: scanned ${done.scanned} items of ${args.table}, placed ${done.placed} sorted entries`);
