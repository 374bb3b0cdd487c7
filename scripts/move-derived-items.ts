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
import { controlTableNameFor } from '../shared/db/control.js';
import { moveDerivedItems } from '../shared/db/derived-items.js';
import { progress, upgradeArgs } from './upgrade-command.js';

const args = upgradeArgs('npm run move-derived-items -- --table <table> --control <control table> [--endpoint URL] [--segments 4]', ['control'], (a) => Boolean(a.extra.control ?? a.endpoint));
const to = args.extra.control ?? controlTableNameFor(args.table);
const done = await moveDerivedItems({
  from: args.table,
  to,
  segments: args.segments,
  onPage: progress((p) => `scanned ${p.scanned} items, moved ${p.moved}`),
});
console.log(`done: scanned ${done.scanned} items of ${args.table}, moved ${done.moved} to ${to}`);
