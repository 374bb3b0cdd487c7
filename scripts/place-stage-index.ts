/**
 * Upgrade command: gives the project records in a pipeline stage, written before GSI2 existed,
 * their GSI2 attributes (a stage's records: pipelines-board and projects-list's `stage_id eq`;
 * docs/deploy.md, "Upgrading a stack deployed before GSI2").
 *
 *   npm run place-stage-index -- --table <table> [--endpoint http://127.0.0.1:8000] [--segments 4]
 *
 * With `--endpoint` it works on that DynamoDB (Local); else on AWS with the usual credential chain.
 * It scans the whole table (the platform's credentials, not a function's). Idempotent.
 */
import { placeStageIndex } from '../shared/db/sorted-index.js';
import { progress, upgradeArgs } from './upgrade-command.js';

const args = upgradeArgs('npm run place-stage-index -- --table <table> [--endpoint URL] [--segments 4]');
const done = await placeStageIndex({
  table: args.table,
  segments: args.segments,
  onPage: progress((p) => `scanned ${p.scanned} items, placed ${p.placed}`),
});
console.log(`done: scanned ${done.scanned} items of ${args.table}, placed ${done.placed} project records in GSI2`);
