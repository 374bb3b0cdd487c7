/**
 * `npm run soak`: a mixed workload from several accounts against a running local server, then a
 * check that every acknowledged write reached the change log, search and each subscribed webhook
 * endpoint as the contract says, nothing missing and nothing extra (scripts/soak/check.ts).
 *
 *   npm run soak [-- --minutes 10] [--accounts 4] [--bulk 1|0] [--url http://127.0.0.1:3000 --token crm_…] [--smtp-port 2525]
 *                [--wait 120] [--max-wait 900] [--pace 1000] [--bulk-backlog 500]
 *
 * Without --url/--token it uses the running `npm start` (its state file, local/state-file.ts) and
 * its printed dev token. The first account is the token's; the others are new accounts whose keys
 * it issues as `npm run token -- create --account <uuid> --user <uuid>` does, in the table of the
 * server the state file names; the last of them writes batches of 100 contacts without pause
 * (`--bulk 0`: it runs the mixed workload too). Every account has three webhook endpoints served
 * by this process on 127.0.0.1: healthy (200), slow (200 after 3 s) and failing (500). Inbound mail goes to 127.0.0.1:--smtp-port (default SMTP_PORT,
 * else 2525; skipped with a note when that listener does not take the account's address).
 *
 * A mixed account sleeps about --pace ms between operations (each one to three requests, batches of
 * up to 10); the bulk account keeps at most --bulk-backlog acknowledged events not yet in its change
 * log (so the drain after the run stays bounded). The first account should have no other writer
 * during the run: events of records the run did not touch count as extra.
 *
 * After the workload it waits until every acknowledged write is in the change log, the healthy
 * receivers got every logged event, the jobs ended and the logs stayed quiet 5 s (giving up after
 * --wait seconds without progress or --max-wait in all), then checks and prints per account the
 * lag percentiles (write acknowledged → first seen by a cursor follower of events-list; → received
 * by the healthy endpoint). Exit code 0 when nothing is missing or extra, 1 otherwise, 2 on usage.
 */
import { parseArgs } from 'node:util';
import { readLocalState, stateFilePath } from '../local/state-file.js';
import { runSoak } from './soak/run.js';

const USAGE = 'usage: npm run soak [-- --minutes 10] [--accounts 4] [--bulk 1|0] [--url http://127.0.0.1:3000 --token crm_…] [--smtp-port 2525] [--wait 120] [--max-wait 900] [--pace 1000] [--bulk-backlog 500]';

function fail(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      accounts: { type: 'string', default: '4' },
      bulk: { type: 'string', default: '1' },
      url: { type: 'string', default: process.env.CRM_URL },
      token: { type: 'string', default: process.env.CRM_TOKEN },
      'smtp-port': { type: 'string', default: process.env.SMTP_PORT || '2525' },
      wait: { type: 'string', default: '120' },
      'max-wait': { type: 'string', default: '900' },
      pace: { type: 'string', default: '1000' },
      'bulk-backlog': { type: 'string', default: '500' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const number = (name: string, raw: string, min: number) => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) fail(`--${name} must be a number ≥ ${min} (got ${raw})`);
  return n;
};
const minutes = number('minutes', values.minutes, 0.05);
const accounts = Math.floor(number('accounts', values.accounts, 1));
const smtpPort = Math.floor(number('smtp-port', values['smtp-port'], 1));
const state = readLocalState();
const baseUrl = (values.url ?? state?.baseUrl)?.replace(/\/+$/, '');
const token = values.token ?? state?.tokens[0]?.token;
if (!baseUrl || !token) fail(`no running npm start found (${stateFilePath()}): start it, or pass --url and --token`);
const host = (() => {
  try {
    return new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
})();
// The webhook receivers listen on this machine's loopback: so must the server.
if (!(host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host))) fail(`--url must be a local server (localhost, 127.0.0.1, [::1]); got ${baseUrl}`);
const sameServer = state !== undefined && state.baseUrl.replace(/\/+$/, '') === baseUrl;
if (accounts > 1 && !sameServer) {
  fail(`--accounts ${accounts} issues keys for new accounts in the table of the server the state file (${stateFilePath()}) names, ${state ? state.baseUrl : 'which is missing'}, not ${baseUrl}: run it against that server (CRM_STATE_FILE names another state file), or pass --accounts 1`);
}

const ok = await runSoak({
  baseUrl,
  token,
  minutes,
  accounts,
  bulk: values.bulk !== '0',
  smtpPort,
  waitSeconds: number('wait', values.wait, 1),
  maxWaitSeconds: number('max-wait', values['max-wait'], 1),
  paceMs: number('pace', values.pace, 0),
  bulkBacklog: number('bulk-backlog', values['bulk-backlog'], 100),
  state: sameServer ? state : undefined,
  print: (line) => console.log(line),
}).catch((error: unknown) => {
  console.error(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(2);
});
process.exit(ok ? 0 : 1);
