/**
 * `npm run soak`: accounts, workload, the wait for the asynchronous half to catch up, the checks
 * and the report (scripts/soak.ts parses the command line).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { LocalState } from '../../local/state-file.js';
import { Account, type SmtpState } from './account.js';
import { type AccountReport, checkAccount, matchExpected, percentiles } from './check.js';
import { Receivers } from './receivers.js';

export interface SoakOptions {
  baseUrl: string;
  token: string;
  minutes: number;
  accounts: number;
  /** Whether the last account (of several) bulk-writes. */
  bulk: boolean;
  smtpPort: number;
  /** Give up waiting after this long without progress (seconds). */
  waitSeconds: number;
  /** Never wait longer than this in all (seconds). */
  maxWaitSeconds: number;
  paceMs: number;
  bulkBacklog: number;
  /** The running server's state (its DynamoDB Local and table: where the extra accounts' keys go). */
  state: LocalState | undefined;
  print: (line: string) => void;
}

const ROOT = join(import.meta.dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Settings of the caller's environment that would point `npm run token` elsewhere than the server's table. */
const FOREIGN_ENV = ['TABLE_NAME', 'CONTROL_TABLE_NAME', 'DYNAMODB_ENDPOINT', 'AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

/** `npm run -s token -- create --account … --user …` against the server's table: its last stdout line is the token. */
async function issueToken(state: LocalState, accountId: string, userId: string): Promise<{ token: string; keyId?: string }> {
  const env = { ...process.env };
  for (const name of FOREIGN_ENV) delete env[name];
  const args = ['run', '-s', 'token', '--', 'create', '--account', accountId, '--user', userId, '--name', 'soak', '--endpoint', state.dynamoEndpoint, '--table', state.tableName];
  const child = spawn('npm', args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const token = stdout.trim().split('\n').at(-1)?.trim() ?? '';
  if (code !== 0 || !token.startsWith('crm_')) throw new Error(`npm run token -- create --account ${accountId} failed (exit ${code}): ${stderr.trim() || stdout.trim()}`);
  return { token, keyId: /\bkey ([0-9a-f-]{36})/.exec(stderr)?.[1] };
}

const fmtLag = (xs: number[]) => {
  const p = percentiles(xs);
  return p ? `${p.p50}/${p.p95}/${p.p99}/${p.max}` : '-';
};

export async function runSoak(o: SoakOptions): Promise<boolean> {
  const print = o.print;
  const tag = Array.from({ length: 4 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
  const receivers = new Receivers();
  await receivers.start();
  const smtp: SmtpState = { port: o.smtpPort, status: 'unknown' };
  print(`soak ${tag}: ${o.accounts} account(s) against ${o.baseUrl} for ${o.minutes} min; receivers on ${receivers.baseUrl}; SMTP 127.0.0.1:${o.smtpPort}`);

  // Accounts: the given token's, then new ones (keys issued as `npm run token` does).
  const extra = o.accounts - 1;
  if (extra > 0 && !o.state) throw new Error('creating accounts needs the running server\'s state file (local/state-file.ts): run against a local `npm start`, or pass --accounts 1');
  const issued = await Promise.all(Array.from({ length: extra }, async () => {
    const accountId = randomUUID();
    return { accountId, ...(await issueToken(o.state!, accountId, randomUUID())) };
  }));
  const accounts = [
    new Account({ index: 0, kind: 'normal', baseUrl: o.baseUrl, token: o.token, tag, receivers, smtp, paceMs: o.paceMs, bulkBacklog: o.bulkBacklog }),
    ...issued.map((x, i) => new Account({ index: i + 1, kind: o.bulk && i === extra - 1 ? 'bulk' : 'normal', baseUrl: o.baseUrl, token: x.token, keyId: x.keyId, accountId: x.accountId, tag, receivers, smtp, paceMs: o.paceMs, bulkBacklog: o.bulkBacklog })),
  ];
  await Promise.all(accounts.map((a) => a.setUp()));
  for (const a of accounts) a.follower.start();
  print(`accounts: ${accounts.map((a) => `${a.label}${a.o.accountId ? ` ${a.o.accountId}` : ''}`).join('; ')}`);

  // The workload.
  const started = Date.now();
  const until = started + o.minutes * 60_000;
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    print('interrupted: stopping the workload, then waiting and checking (again to quit at once)');
    for (const a of accounts) a.stop();
  };
  process.on('SIGINT', onSignal);
  const line = () => accounts.map((a) => `${a.label.split(' ')[0]} ${a.ledger.writes} writes, log ${a.follower.events.length}, hooks ${a.hooks.healthy.receipts.size}`).join(' | ');
  const progress = setInterval(() => print(`[${Math.round((Date.now() - started) / 1000)} s] ${line()}`), 15_000);
  try {
    await Promise.all(accounts.map((a) => (a.o.kind === 'bulk' ? a.runBulk(until) : a.runNormal(until))));
  } finally {
    clearInterval(progress);
  }
  const workloadSeconds = (Date.now() - started) / 1000;
  print(`workload done after ${workloadSeconds.toFixed(0)} s: ${line()}`);
  if (smtp.status === 'skipped') print(`note: inbound mail skipped: ${smtp.reason}`);

  // The wait: until every acknowledged write is in the log, the healthy receivers have every
  // logged event, the jobs are done and the logs have been quiet a while; or until nothing moves.
  const waitStart = Date.now();
  for (const a of accounts) a.jobsDeadline = waitStart + o.maxWaitSeconds * 1000;
  let lastSignature = '';
  let lastProgressAt = Date.now();
  let lastPrint = 0;
  let converged = false;
  for (;;) {
    const status = accounts.map((a) => {
      const pending = matchExpected(a, a.follower.events).pending;
      const undelivered = a.follower.events.filter((e) => !a.hooks.healthy.receipts.has(e.id)).length;
      return { a, pending, undelivered, jobs: a.pendingJobs, quietMs: Date.now() - a.follower.lastGrowthAt };
    });
    const signature = status.map((s) => `${s.pending}/${s.undelivered}/${s.jobs}/${s.a.follower.events.length}`).join(' ');
    if (signature !== lastSignature) {
      lastSignature = signature;
      lastProgressAt = Date.now();
    }
    converged = status.every((s) => s.pending === 0 && s.undelivered === 0 && s.jobs === 0 && s.quietMs >= 5_000);
    if (converged || Date.now() - lastPrint >= 5_000) {
      lastPrint = Date.now();
      print(`[wait ${Math.round((Date.now() - waitStart) / 1000)} s] ${status.map((s) => `${s.a.label.split(' ')[0]}: ${s.pending} writes not in the log, ${s.undelivered} events not delivered, ${s.jobs} jobs running, log quiet ${Math.round(s.quietMs / 1000)} s`).join(' | ')}`);
    }
    if (converged) break;
    if (Date.now() - lastProgressAt > o.waitSeconds * 1000 || Date.now() - waitStart > o.maxWaitSeconds * 1000) {
      print(`giving up waiting: ${Date.now() - lastProgressAt > o.waitSeconds * 1000 ? `nothing moved for ${o.waitSeconds} s` : `${o.maxWaitSeconds} s in all`}`);
      break;
    }
    await sleep(1_000);
  }
  const waitSeconds = (Date.now() - waitStart) / 1000;
  for (const a of accounts) a.jobsDeadline = Date.now();
  await Promise.all(accounts.flatMap((a) => a.background));
  for (const a of accounts) await a.follower.stop();
  for (const a of accounts) await a.follower.poll();
  process.off('SIGINT', onSignal);

  // The checks.
  print(`checking (log read afresh, deliveries, search)…`);
  const reports: AccountReport[] = await Promise.all(accounts.map((a) => checkAccount(a, accounts, 30)));
  for (const a of accounts) await a.tearDown();
  await receivers.stop();

  // The report.
  const table = [
    ['account', 'writes', 'log events', 'matched', 'hook events', 'search', 'log lag ms p50/p95/p99/max', 'webhook lag ms p50/p95/p99/max', 'problems'],
    ...reports.map((r, i) => {
      const a = accounts[i]!;
      return [r.label, String(a.ledger.writes), String(r.logEvents), `${r.matched}${r.skipped ? ` (+${r.skipped} skipped)` : ''}`, String(r.healthyReceived), `${r.search.live}+${r.search.gone}`, fmtLag(r.visibility), fmtLag(r.webhook), String(r.problems.length)];
    }),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  print('');
  print(`soak ${tag}: workload ${workloadSeconds.toFixed(0)} s, wait ${waitSeconds.toFixed(0)} s${converged ? '' : ' (did not converge)'}`);
  for (const row of table) print(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
  const all = (f: (r: AccountReport) => number[]) => reports.flatMap(f);
  print(`${'all'.padEnd(widths[0]!)}  log lag ms p50/p95/p99/max ${fmtLag(all((r) => r.visibility))}; webhook lag ms ${fmtLag(all((r) => r.webhook))}`);
  print('');
  for (const [i, r] of reports.entries()) {
    const a = accounts[i]!;
    const ops = [...a.ledger.acked.entries()].sort((x, y) => y[1] - x[1]).map(([op, n]) => `${op} ${n}`).join(', ');
    print(`${r.label}: ${ops}`);
    const jobs = [
      `imports ${a.ledger.imports.map((j) => `${j.status}${j.counts ? ` ${j.counts.created}+${j.counts.updated}` : ''}`).join(', ') || 'none'}`,
      `exports ${a.ledger.exports.map((j) => `${j.objectType} ${j.status}`).join(', ') || 'none'}`,
      `erasures ${a.ledger.erasures.map((j) => j.status).join(', ') || 'none'}`,
      `inbound mails ${a.ledger.inbound.length}`,
    ];
    print(`  jobs: ${jobs.join('; ')}`);
    print(`  healthy endpoint: ${r.healthyRequests} requests, ${r.healthyReceived} events${r.healthyRetries ? `, ${r.healthyRetries} retried under the same delivery id` : ''}; slow: ${r.deliveries.slow.records} delivery records ${JSON.stringify(r.deliveries.slow.statuses)}, ${a.hooks.slow.requests} requests; failing: ${r.deliveries.failing.records} records ${JSON.stringify(r.deliveries.failing.statuses)}, ${a.hooks.failing.requests} requests`);
    print(`  requests ${a.api.requests} (${a.api.retried} retried)${a.backpressureMs ? `, held back ${(a.backpressureMs / 1000).toFixed(0)} s by its backlog` : ''}${a.ledger.uncertain.size ? `, ${a.ledger.uncertain.size} records with a write of unknown outcome (not checked exactly)` : ''}`);
    const notes = new Map<string, number>();
    for (const n of a.ledger.notes) notes.set(n, (notes.get(n) ?? 0) + 1);
    for (const [n, count] of notes) print(`  note: ${n}${count > 1 ? ` ×${count}` : ''}`);
  }
  const problems = reports.reduce((s, r) => s + r.problems.length, 0);
  if (problems) {
    print('');
    print('PROBLEMS');
    for (const r of reports) {
      const shown = r.problems.slice(0, 40);
      for (const p of shown) print(`  ${r.label} [${p.kind}] ${p.message}`);
      if (r.problems.length > shown.length) print(`  ${r.label}: … ${r.problems.length - shown.length} more`);
    }
  }
  print('');
  const kinds = new Map<string, number>();
  for (const p of reports.flatMap((r) => r.problems)) kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
  const written = accounts.reduce((s, a) => s + a.ledger.writes, 0);
  const logged = reports.reduce((s, r) => s + r.logEvents, 0);
  print(problems ? `soak FAILED: ${problems} problem(s) (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); ${written} writes, ${logged} events` : `soak PASSED: ${written} acknowledged writes, ${logged} events logged and delivered, nothing missing, nothing extra`);
  return problems === 0;
}
