import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerToken, saveToken } from '../shared/auth/tokens.js';
import { defaultDevToken } from './dev-token.js';
import { DEFAULT_TABLE_NAME } from '../shared/db/table.js';
import type { AuthContext } from '../shared/http/operation.js';
import { ensureTable, LOCAL_AWS_ENV, type LocalDynamo, startDynamo } from './dynamo.js';
import { recoverImports } from '../shared/imports/recover.js';
import { type LocalImports, startLocalImports } from './imports.js';
// --- exports (contract §16) ---
import { recoverExports } from '../shared/exports/recover.js';
import { type LocalExports, startLocalExports } from './exports.js';
// --- end exports ---
import { type LocalQueue, startLocalQueue } from './queue.js';
import { createApiServer, type RequestLog, type StaticRoute } from './server.js';
import type { QueueWorker } from './queue-worker.js';
import type { StreamPoller } from './stream-poller.js';
import type { LocalSweeper } from './webhook-sweeper.js';
import { startWorkersThread } from './workers.js';
import { startBackgroundWorkers } from './background-workers.js';
import { DEFAULT_SMTP_PORT, type SmtpListener, startSmtpListener } from './smtp.js';
import { inboundAddress } from '../shared/domain/inbound-emails.js';
import { currentRateLimit } from '../shared/domain/rate-limit.js';

export const DEFAULT_ACCOUNT: AuthContext = {
  accountId: '00000000-0000-4000-8000-000000000001',
  userId: '00000000-0000-4000-8000-000000000002',
};

export interface DevToken extends AuthContext {
  token: string;
}

/** Parses `CRM_DEV_TOKENS`: `token=account_id:user_id,...`. */
export function parseDevTokens(value: string): DevToken[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([^=]+)=([0-9a-fA-F-]{36}):([0-9a-fA-F-]{36})$/.exec(entry);
      if (!m) throw new Error(`CRM_DEV_TOKENS entry "${entry.split('=')[0]}=…" is not token=account_id:user_id`);
      if (!bearerToken(`Bearer ${m[1]}`)) throw new Error('CRM_DEV_TOKENS tokens must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = -');
      return { token: m[1]!, accountId: m[2]!.toLowerCase(), userId: m[3]!.toLowerCase() };
    });
}

export interface LocalStackOptions {
  port?: number;
  host?: string;
  dataDir?: string;
  tableName?: string;
  devTokens?: string;
  /** Extra GET routes (e.g. documentation). */
  routes?: StaticRoute[];
  onStreamError?: (e: unknown) => void;
  onQueueError?: (e: unknown) => void;
  /** Called once per answered HTTP request (npm start prints a line). */
  onRequest?: (entry: RequestLog) => void;
  /** SMTP listener port (inbound email): SMTP_PORT, else 2525 when `port` is fixed, else a free port. */
  smtpPort?: number;
  /** Errors of the SMTP listener or of processing a message (the client got a 4xx); default: onQueueError. */
  onSmtpError?: (e: unknown) => void;
  /**
   * Run the stream, delivery and import workers and the sweeper in a worker thread
   * (local/workers-thread.ts; `npm start` with CRM_LOCAL_WORKERS=thread), so the API keeps its own
   * event loop under a big import. Their drain() and stop() still work; sweeper.sweep() does not.
   */
  workersInThread?: boolean;
}

export interface LocalStack {
  baseUrl: string;
  dynamoEndpoint: string;
  tableName: string;
  tokens: DevToken[];
  poller: StreamPoller;
  /** The local SQS-compatible delivery queue (fauxqs) and its worker. */
  deliveryQueueUrl: string;
  /** The delivery worker (its drain() waits until the queue is idle) and the delivery sweeper. */
  queueWorker: QueueWorker;
  sweeper: LocalSweeper;
  /** Imports: the bucket and queue on the same fauxqs, and the import worker (local/imports.ts). */
  imports: LocalImports;
  /** Exports: the export queue and worker (files in the imports bucket under exports/; local/exports.ts). */
  exports: LocalExports;
  server: Server;
  /** The local SMTP listener (inbound email) and the inbound address of each token's account. */
  smtp: SmtpListener;
  inboundAddresses: Array<{ accountId: string; address: string }>;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local with the shared table definition, the
 * stream worker, and the HTTP API, all running the same handlers Lambda runs.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = opts.tableName ?? DEFAULT_TABLE_NAME;
  let dynamo: LocalDynamo | undefined;
  let poller: StreamPoller | undefined;
  let server: Server | undefined;
  let queue: LocalQueue | undefined;
  let queueWorker: QueueWorker | undefined;
  let sweeper: LocalSweeper | undefined;
  let imports: LocalImports | undefined;
  let exports: LocalExports | undefined;
  let smtp: SmtpListener | undefined;
  const stop = async () => {
    await smtp?.stop();
    if (server) await new Promise<void>((r) => server!.close(() => r()));
    server?.closeAllConnections?.();
    await poller?.stop();
    await sweeper?.stop();
    await queueWorker?.stop();
    await imports?.stop();
    await exports?.stop();
    await queue?.stop();
    await dynamo?.stop();
  };
  try {
    // A malformed CRM_RATE_LIMIT stops the start here rather than failing every request.
    currentRateLimit();
    dynamo = await startDynamo({ dataDir: opts.dataDir });
    Object.assign(process.env, LOCAL_AWS_ENV, { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: dynamo.endpoint, CRM_LOCAL: 'true' });
    process.env.CRM_ALLOW_INSECURE_WEBHOOKS ??= 'true';
    await ensureTable(dynamo.endpoint, tableName);

    const tokens: DevToken[] = [];
    if (opts.devTokens) {
      for (const t of parseDevTokens(opts.devTokens)) {
        await saveToken(t.token, t);
        tokens.push(t);
      }
    } else {
      // The same token across restarts with a data directory (local/dev-token.ts).
      tokens.push({ ...DEFAULT_ACCOUNT, token: await defaultDevToken(DEFAULT_ACCOUNT, opts.dataDir) });
    }

    // Every local service listens on 127.0.0.1 only (test/integration/local-start.test.ts).
    // With a data directory the object store (import files, inline CSVs) lives in it too.
    queue = await startLocalQueue('crm-webhook-deliveries', { objectDir: opts.dataDir ? `${opts.dataDir}/objects` : undefined });
    const { queueUrl, endpoint: queueEndpoint } = queue;
    Object.assign(process.env, { DELIVERY_QUEUE_URL: queueUrl, AWS_ENDPOINT_URL_SQS: queueEndpoint });
    const positionFile = opts.dataDir ? `${opts.dataDir}/stream-positions.json` : undefined;
    // The buckets, queues and their environment here (a workers thread copies this environment
    // when it starts); jobs queued or running when the service last stopped (their messages died
    // with the in-memory queue) are queued again: contract §7. Local mode is one process, so a
    // lease still held is the stopped process's: it is released and the job resumes at once.
    imports = await startLocalImports(queueEndpoint, { onError: opts.onQueueError, worker: false });
    await recoverImports({ releaseLeases: true });
    exports = await startLocalExports(queueEndpoint, { onError: opts.onQueueError, worker: false });
    await recoverExports({ releaseLeases: true });
    const resources = { queueEndpoint, deliveryQueueUrl: queueUrl, importsQueueUrl: imports.queueUrl, exportsQueueUrl: exports.queueUrl, dynamoEndpoint: dynamo.endpoint, tableName, positionFile };
    const on = { onStreamError: opts.onStreamError, onQueueError: opts.onQueueError };
    const workers = opts.workersInThread ? await startWorkersThread(resources, on) : await startBackgroundWorkers(resources, on);
    imports = { ...imports, worker: workers.imports, stop: () => workers.imports.stop() };
    exports = { ...exports, worker: workers.exports, stop: () => workers.exports.stop() };
    ({ poller, sweeper, deliveries: queueWorker } = workers);
    // ---- inbound email (contract §11): SMTP on 127.0.0.1, the same processing as SES → S3 → Lambda.
    process.env.CRM_INBOUND_DOMAIN ??= 'inbound.localhost';
    const smtpPort = opts.smtpPort ?? (process.env.SMTP_PORT ? Number(process.env.SMTP_PORT) : opts.port ? DEFAULT_SMTP_PORT : 0);
    smtp = await startSmtpListener({ port: smtpPort, host: '127.0.0.1', onError: opts.onSmtpError ?? opts.onQueueError });
    const inboundAddresses = await Promise.all(
      [...new Map(tokens.map((t) => [t.accountId, t])).values()].map(async (t) => ({ accountId: t.accountId, address: (await inboundAddress({ ...t, operation: 'inbound-emails-address', headers: {} })).address })),
    );
    // ---- end inbound email
    server = createApiServer(opts.routes, { onRequest: opts.onRequest });
    const srv = server;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return { baseUrl: `http://127.0.0.1:${port}`, dynamoEndpoint: dynamo.endpoint, tableName, tokens, poller, deliveryQueueUrl: queueUrl, queueWorker, sweeper, imports, exports, server, smtp, inboundAddresses, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
