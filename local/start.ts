/**
 * `npm start`: the whole service on this machine. See README "Local mode".
 *
 * Every service listens on 127.0.0.1 only. SIGINT (Ctrl-C), SIGTERM and SIGHUP stop everything,
 * DynamoDB Local's Java process included, quietly. One line per request and per failed webhook
 * attempt while it runs; `LOG_LEVEL=warn` keeps only the failures, `error` only errors.
 */
import { optionalEnv } from '../shared/config/env.js';
import { currentRateLimit } from '../shared/domain/rate-limit.js';
import { docsRoutes } from './docs-routes.js';
import { SDK_QUIET_ENV } from './dynamo.js';
import { parseDevTokens, startLocalStack } from './runtime.js';
import { formatRequestLog } from './server.js';
import { removeLocalState, stateFilePath, writeLocalState } from './state-file.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
type Level = (typeof LEVELS)[number];
const levelName = (optionalEnv('LOG_LEVEL') ?? 'info').toLowerCase();
if (!(LEVELS as readonly string[]).includes(levelName)) {
  console.error(`LOG_LEVEL must be one of ${LEVELS.join(', ')} (got ${JSON.stringify(levelName)})`);
  process.exit(2);
}
const level = LEVELS.indexOf(levelName as Level);
const enabled = (at: Level) => level <= LEVELS.indexOf(at);
// The handlers' JSON logs (Powertools) follow LOG_LEVEL unless POWERTOOLS_LOG_LEVEL says otherwise.
process.env.POWERTOOLS_LOG_LEVEL ??= levelName === 'silent' ? 'SILENT' : levelName.toUpperCase();
Object.assign(process.env, SDK_QUIET_ENV, { POWERTOOLS_METRICS_DISABLED: 'true' });

let stopping = false;
/** Errors of the workers while stopping are the expected end of their connections: not shown. */
const workerError = (fn: { name: string }, e: unknown) => {
  if (stopping || !enabled('error')) return;
  console.error(`${fn.name} worker error: ${e instanceof Error ? e.message : String(e)}`);
};

const workersMode = optionalEnv('CRM_LOCAL_WORKERS') ?? 'thread';
if (workersMode !== 'thread' && workersMode !== 'main') {
  console.error(`CRM_LOCAL_WORKERS must be thread or main (got ${JSON.stringify(workersMode)})`);
  process.exit(2);
}

// A bad CRM_DEV_TOKENS entry is the user's to fix: say which and how, not a stack trace.
const devTokens = optionalEnv('CRM_DEV_TOKENS');
if (devTokens) {
  try {
    parseDevTokens(devTokens);
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)} (e.g. CRM_DEV_TOKENS=my-local-token-1234=00000000-0000-4000-8000-000000000001:00000000-0000-4000-8000-000000000002)`);
    process.exit(2);
  }
}

const port = Number(optionalEnv('PORT') ?? 3000);
const stack = await startLocalStack({
  port,
  dataDir: optionalEnv('CRM_DATA_DIR'),
  devTokens,
  routes: docsRoutes(),
  // The workers in a thread of their own, so the API keeps its event loop under a big import
  // (docs/performance.md, "Mixed load"); CRM_LOCAL_WORKERS=main runs them beside the API.
  workersInThread: workersMode === 'thread',
  onWorkerError: workerError,
  onRequest: (entry) => {
    if (enabled('info') && !stopping) console.log(formatRequestLog(entry));
  },
});

console.log(`CRM API ready at ${stack.baseUrl}/api/<operation>`);
console.log(`API reference at ${stack.baseUrl}/docs (OpenAPI document: ${stack.baseUrl}/openapi.json)`);
console.log(`DynamoDB Local at ${stack.dynamoEndpoint} (table ${stack.tableName}${optionalEnv('CRM_DATA_DIR') ? `, data in ${optionalEnv('CRM_DATA_DIR')}` : ', in memory'})`);
console.log(`webhook delivery queue at ${stack.deliveryQueueUrl} (see docs/webhooks.md)`);
for (const a of stack.inboundAddresses) console.log(`inbound email: smtp://127.0.0.1:${stack.smtp.port} accepts mail for ${a.address} (account ${a.accountId}; see docs/inbound-email.md)`);
const limit = currentRateLimit();
console.log(limit ? `rate limit per account: ${limit.rate} requests/s, bursts of ${limit.burst} (CRM_RATE_LIMIT=rate,burst; 0 turns it off)` : 'rate limit: off (CRM_RATE_LIMIT=0)');
// `npm run token` and `npm run seed` find this server through this file (local/state-file.ts):
// written before the tokens are printed, so whoever acts on a printed token finds it.
writeLocalState({ pid: process.pid, baseUrl: stack.baseUrl, dynamoEndpoint: stack.dynamoEndpoint, tableName: stack.tableName, dataDir: optionalEnv('CRM_DATA_DIR') ?? null, tokens: stack.tokens, startedAt: new Date().toISOString() });
process.once('exit', () => removeLocalState());
for (const t of stack.tokens) console.log(`token for account ${t.accountId} (user ${t.userId}): ${t.token}`);
console.log(`local state in ${stateFilePath()} (read by npm run token and npm run seed)`);
console.log(`try: curl -s -X POST ${stack.baseUrl}/api/contacts-list -H 'Authorization: Bearer ${stack.tokens[0]?.token}' -H 'Content-Type: application/json' -d '{}'`);

const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping…`);
  // Should anything hang, do not outlive the signal by more than a few seconds.
  setTimeout(() => process.exit(1), 10_000).unref();
  removeLocalState();
  try {
    await stack.stop();
  } catch (error) {
    console.error(`while stopping: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  console.log('stopped');
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
// `npm start` runs this process under npm, which forwards SIGINT and SIGTERM but dies of a
// SIGHUP (or a SIGKILL) without passing it on: stop as well when the parent is gone.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown('parent process exited');
}, 500).unref();
