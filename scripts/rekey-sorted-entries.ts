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
import { parseArgs } from 'node:util';
import { rekeySortedEntries } from '../shared/db/sorted-index.js';

const { values } = parseArgs({ options: { table: { type: 'string' }, endpoint: { type: 'string' }, segments: { type: 'string' } } });
if (!values.table) {
  console.error('usage: npm run rekey-sorted-entries -- --table <table> [--endpoint URL] [--segments 4]');
  process.exit(2);
}
if (values.endpoint) {
  Object.assign(process.env, { DYNAMODB_ENDPOINT: values.endpoint, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1' });
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}
process.env.TABLE_NAME = values.table;
let last = 0;
const done = await rekeySortedEntries({
  table: values.table,
  segments: Number(values.segments ?? 4),
  onPage: (p) => {
    if (Date.now() - last < 2_000) return;
    last = Date.now();
    console.error(`scanned ${p.scanned} items, rekeyed ${p.rekeyed}`);
  },
});
console.log(`done: scanned ${done.scanned} items of ${values.table}, rekeyed ${done.rekeyed} sorted entries`);
