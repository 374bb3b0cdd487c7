/**
 * Upgrade command: moves the search entries, their counters and the change log from the records'
 * table to the control table (shared/db/derived-items.ts), for a stack or a `npm start` data
 * directory that holds them from a version before they moved (docs/deploy.md, "Upgrading a stack").
 *
 *   npm run move-derived-items -- --table <table> --control <control table> [--endpoint http://127.0.0.1:8000]
 *
 * With `--endpoint` it works on that DynamoDB (Local) and `--control` defaults to `<table>-control`
 * (local mode's name); else on AWS with the usual credential chain (AWS_PROFILE, AWS_REGION…).
 * It scans the whole table (the platform's credentials, not a function's: no function may Scan).
 * Idempotent: a run that stopped is run again.
 */
import { parseArgs } from 'node:util';
import { controlTableNameFor } from '../shared/db/control.js';
import { moveDerivedItems } from '../shared/db/derived-items.js';

const { values } = parseArgs({ options: { table: { type: 'string' }, control: { type: 'string' }, endpoint: { type: 'string' }, segments: { type: 'string' } } });
if (!values.table || (!values.control && !values.endpoint)) {
  console.error('usage: npm run move-derived-items -- --table <table> --control <control table> [--endpoint URL] [--segments 4]');
  process.exit(2);
}
if (values.endpoint) {
  Object.assign(process.env, { DYNAMODB_ENDPOINT: values.endpoint, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1' });
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
}
process.env.TABLE_NAME = values.table;
const to = values.control ?? controlTableNameFor(values.table);
let last = 0;
const done = await moveDerivedItems({
  from: values.table,
  to,
  segments: Number(values.segments ?? 4),
  onPage: (p) => {
    if (Date.now() - last < 2_000) return;
    last = Date.now();
    console.error(`scanned ${p.scanned} items, moved ${p.moved}`);
  },
});
console.log(`done: scanned ${done.scanned} items of ${values.table}, moved ${done.moved} to ${to}`);
