/**
 * `npm run status`: the asynchronous half of a running `npm start` at a glance: each queue's
 * backlog and oldest message, and each background function's work in hand and last progress
 * (GET /_local/status; docs/architecture.md, "What keeps the asynchronous half alive").
 *
 *   npm run status [-- --url http://127.0.0.1:3000] [--json]
 *
 * Exit code 1 when a function has had work in hand for 30 s or more with no progress for as long
 * (what local mode itself logs at ERROR and restarts), 2 when no server is found.
 */
import { parseArgs } from 'node:util';
import { readLocalState, stateFilePath } from '../local/state-file.js';
import type { LocalStatus } from '../local/status.js';

const { values } = parseArgs({ options: { url: { type: 'string' }, json: { type: 'boolean' } } });
const baseUrl = values.url ?? readLocalState()?.baseUrl;
if (!baseUrl) {
  console.error(`no running npm start found (${stateFilePath()}): start it, or pass --url`);
  process.exit(2);
}
const res = await fetch(`${baseUrl}/_local/status`).catch((error: unknown) => {
  console.error(`${baseUrl}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
});
const status = (await res.json()) as LocalStatus;
if (values.json) {
  console.log(JSON.stringify(status, null, 2));
  process.exit(0);
}

const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
console.log(`status at ${status.at}\n`);
console.log('queue                                  visible  in flight  delayed  oldest');
for (const q of status.queues) console.log(`${q.queue.padEnd(38)} ${String(q.visible).padStart(7)} ${String(q.inFlight).padStart(10)} ${String(q.delayed).padStart(8)}  ${s(q.oldestAgeMs)}`);
console.log('\nfunction            in hand  oldest in hand  last progress  handled  restarts');
const STALL_MS = 30_000;
let stalled = false;
for (const [name, raw] of Object.entries(status.functions)) {
  const f = raw as { inHand?: number; oldestInHandMs?: number; inHandlerForMs?: number; lastFinishedAgoMs?: number; lastHandledAgoMs?: number; finished?: number; handled?: number; restarts?: number; retrying?: number };
  const inHand = f.inHand ?? (f.inHandlerForMs ? 1 : 0) + (f.retrying ? 1 : 0);
  const oldest = f.oldestInHandMs ?? f.inHandlerForMs ?? 0;
  const last = f.lastFinishedAgoMs ?? f.lastHandledAgoMs;
  const stuck = oldest >= STALL_MS && (last === undefined || last >= STALL_MS);
  stalled ||= stuck;
  console.log(`${name.padEnd(19)} ${String(inHand).padStart(7)} ${s(oldest).padStart(15)} ${s(last).padStart(14)} ${String(f.finished ?? f.handled ?? 0).padStart(8)} ${String(f.restarts ?? 0).padStart(9)}${stuck ? '  STALLED' : ''}`);
}
process.exit(stalled ? 1 : 0);
