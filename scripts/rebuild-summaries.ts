/**
 * Recomputes the summary counters (contract §21) from the records (projects, contacts, companies,
 * activities) and adds the
 * difference to each counter (docs/data-model.md, "Summary counters"), printing the drift it
 * corrected ("0 drift" when there was none):
 *
 *   npm run rebuild-summaries -- --table <table> [--control <control table>] [--endpoint http://127.0.0.1:8000] [--account <id>]
 *
 * `--control` defaults to local mode's name of the table's control table (`<table>-control`).
 *
 * Without `--account`, every account that has such records or counters (a Scan of the table and the
 * control table). Run it once the account's changes have been applied (no write in flight): a
 * change in the records but not yet counted by the changes worker would be counted twice.
 */
import { bindingEnv } from '../shared/config/bindings.js';
import { controlTableNameFor } from '../shared/db/control.js';
import { type CounterDrift, rebuildSummaries, summaryAccounts } from '../shared/domain/summaries.js';
import { upgradeArgs } from './upgrade-command.js';

const args = upgradeArgs('npm run rebuild-summaries -- --table <table> [--control <table>] [--endpoint URL] [--account <id>]', ['account', 'control']);
process.env[bindingEnv('control')] = args.extra.control ?? process.env[bindingEnv('control')] ?? controlTableNameFor(args.table);

/** One line per corrected counter: its dimension and group, and what was added. */
const line = (accountId: string, d: CounterDrift) => {
  const parts = [`n ${d.n > 0 ? '+' : ''}${d.n}`, ...Object.entries(d.sums).map(([k, v]) => `${k} ${v > 0 ? '+' : ''}${v}`), ...Object.entries(d.counts).map(([k, v]) => `amounts of ${k} ${v > 0 ? '+' : ''}${v}`)];
  return `${accountId} ${d.dimension} ${d.group}: ${parts.join(', ')}`;
};

const accounts = args.extra.account ? [args.extra.account] : [...(await summaryAccounts())];
let corrected = 0;
for (const accountId of accounts) {
  const drift = await rebuildSummaries(accountId);
  for (const d of drift) console.log(line(accountId, d));
  corrected += drift.length;
}
console.log(corrected ? `${corrected} counters corrected in ${accounts.length} accounts` : `0 drift (${accounts.length} accounts)`);
