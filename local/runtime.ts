import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FUNCTIONS, type QueueName, type TriggerKind } from '../functions/topology.js';
import { bearerToken, saveToken } from '../shared/auth/tokens.js';
import { defaultDevToken } from './dev-token.js';
import { DEFAULT_TABLE_NAME } from '../shared/db/table.js';
import type { AuthContext } from '../shared/http/operation.js';
import { ensureTable, LOCAL_AWS_ENV, type LocalDynamo, startDynamo } from './dynamo.js';
import { recoverImports } from '../shared/imports/recover.js';
import { recoverExports } from '../shared/exports/recover.js';
import { recoverErasures } from '../shared/erasures/recover.js';
import { recoverIndexBuilds } from '../shared/indexing/recover.js';
import { sweepDueDeliveries } from '../shared/webhooks/sweeper.js';
import { type LocalQueue, startLocalQueue } from './queue.js';
import { createLocalResources, LOCAL_QUEUES, type LocalResources } from './resources.js';
import { createApiServer, type RequestLog, type StaticRoute } from './server.js';
import type { QueueWorker } from './queue-worker.js';
import type { StreamPoller } from './stream-poller.js';
import type { LocalFunction } from './triggers.js';
import { startWorkersThread } from './workers.js';
import { type BackgroundWorkers, startBackgroundWorkers, type WorkerErrorHandler } from './background-workers.js';
import { DEFAULT_SMTP_PORT, type SmtpListener } from './smtp.js';
import { inboundAddress } from '../shared/domain/inbound-emails.js';
import { currentRateLimit } from '../shared/domain/rate-limit.js';
import { type LocalStatus, queueStatuses, statusRoute } from './status.js';

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
  /**
   * A DynamoDB Local already running (a test's: its worker's instance, test/helpers/global-setup.ts):
   * the stack creates its table there unless it exists and leaves the instance running when it
   * stops. Default: a DynamoDB Local of the stack's own (in `dataDir` when given).
   */
  dynamoEndpoint?: string;
  devTokens?: string;
  /** Extra GET routes (e.g. documentation). */
  routes?: StaticRoute[];
  /** Errors of a background function (its trigger or its handler, the SMTP listener's included); default: ignored. */
  onWorkerError?: WorkerErrorHandler;
  /** Called once per answered HTTP request (npm start prints a line). */
  onRequest?: (entry: RequestLog) => void;
  /** SMTP listener port (inbound email): SMTP_PORT, else 2525 when `port` is fixed, else a free port. */
  smtpPort?: number;
  /**
   * Run the background functions (every function of the topology but the API's) in a worker
   * thread (local/workers-thread.ts; `npm start` unless CRM_LOCAL_WORKERS=main), so the API keeps
   * its own event loop under a big import. Their drain() and stop() still work.
   */
  workersInThread?: boolean;
}

/** A background function's queue worker (drain() waits until its queue is idle). */
export interface LocalJobs {
  queueUrl: string;
  worker: QueueWorker;
}

export interface LocalStack {
  baseUrl: string;
  dynamoEndpoint: string;
  tableName: string;
  tokens: DevToken[];
  /** The local queues and buckets, one per binding of the topology (local/resources.ts). */
  resources: LocalResources;
  /** Every background function of the topology by name (local/triggers.ts), in either layout. */
  functions: Record<string, LocalFunction>;
  /** The stream function's poller (drain(): every record written so far handled, the changes queue's work included). */
  poller: StreamPoller;
  /** The local SQS-compatible delivery queue (fauxqs). */
  deliveryQueueUrl: string;
  /** The delivery queue's worker (its drain() waits until the queue is idle). */
  queueWorker: QueueWorker;
  /** Imports and exports: their queues and workers (files in the imports bucket). */
  imports: LocalJobs & { bucket: string };
  exports: LocalJobs & { bucket: string };
  /** Erasures (contract §18): their queue and worker. */
  erasures: LocalJobs;
  /** Index builds (contract §17): their queue and worker. */
  indexBuilds: LocalJobs;
  server: Server;
  /** The local SMTP listener (inbound email: the `object` trigger) and the inbound address of each token's account. */
  smtp: SmtpListener;
  inboundAddresses: Array<{ accountId: string; address: string }>;
  stop(): Promise<void>;
}

/** The one background function of this trigger kind (of this queue). */
function functionOf(functions: Record<string, LocalFunction>, kind: TriggerKind, queue?: QueueName): LocalFunction {
  const spec = FUNCTIONS.find((f) => f.trigger.kind === kind && (queue === undefined || (f.trigger.kind === 'queue' && f.trigger.queue === queue)));
  const fn = spec && functions[spec.name];
  if (!fn) throw new Error(`local mode runs no ${kind} function${queue ? ` on the ${queue} queue` : ''}`);
  return fn;
}

/**
 * The stream and the changes queue it routes to as one: drain() waits for both, in that order,
 * and again while the changes worker's own writes (a rename's fan-out, a merge's next chunk) put
 * new records on the stream: until a round in which the changes worker finished nothing new (two
 * rounds where its count is not known: the workers thread).
 */
function routedStream(functions: Record<string, LocalFunction>, stop?: () => Promise<void>): StreamPoller {
  const stream = functionOf(functions, 'stream');
  const changes = functionOf(functions, 'queue', 'changes');
  const finished = () => (changes.state?.() as { finished?: number } | undefined)?.finished;
  return {
    async drain(timeoutMs) {
      for (let round = 0; ; round++) {
        const before = finished();
        await stream.drain(timeoutMs);
        await changes.drain(timeoutMs);
        const after = finished();
        if (after === undefined ? round >= 1 : after === before) return;
      }
    },
    stop: stop ?? (() => stream.stop()),
  };
}

/** The functions of the record changes' path: the stream function and the changes queue's worker. */
const CHANGES_PATH = FUNCTIONS.filter((f) => f.trigger.kind === 'stream' || (f.trigger.kind === 'queue' && f.trigger.queue === 'changes'));

/**
 * The record changes' path alone, as `npm start` runs it: the stream function routing to the
 * changes queue (`r.queueUrls.changes`, created already, its URL in the stream's binding) and the
 * changes worker on it, under their triggers' adapters with their handlers and grants. For tests
 * that run the stream beside their own table and queues: drain() waits for the stream and then
 * the changes queue; stop() stops both.
 */
export async function startRoutedStream(r: LocalResources, opts: { onError?: WorkerErrorHandler } = {}): Promise<StreamPoller> {
  const workers = await startBackgroundWorkers(r, opts, CHANGES_PATH);
  return routedStream(workers.functions, () => workers.stop());
}

/**
 * The whole service on one machine: DynamoDB Local with the shared table definition, one local
 * resource per binding (local/resources.ts), every function of the topology under its trigger's
 * local adapter (local/triggers.ts; the API's in local/server.ts), all running the same handlers
 * Lambda runs.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const tableName = opts.tableName ?? DEFAULT_TABLE_NAME;
  let dynamo: LocalDynamo | undefined;
  let server: Server | undefined;
  let queue: LocalQueue | undefined;
  let workers: BackgroundWorkers | undefined;
  const stop = async () => {
    if (server) await new Promise<void>((r) => server!.close(() => r()));
    server?.closeAllConnections?.();
    await workers?.stop();
    await queue?.stop();
    await dynamo?.stop();
  };
  try {
    // A malformed CRM_RATE_LIMIT stops the start here rather than failing every request.
    currentRateLimit();
    if (!opts.dynamoEndpoint) dynamo = await startDynamo({ dataDir: opts.dataDir });
    const dynamoEndpoint = opts.dynamoEndpoint ?? dynamo!.endpoint;
    Object.assign(process.env, LOCAL_AWS_ENV, { CRM_LOCAL: 'true' });
    // Local defaults of settings (README "Local mode"): plain-HTTP receivers, a short sweep grace.
    process.env.CRM_ALLOW_INSECURE_WEBHOOKS ??= 'true';
    process.env.WEBHOOK_SWEEP_GRACE_SECONDS ??= '15';
    await ensureTable(dynamoEndpoint, tableName);

    // Every local service listens on 127.0.0.1 only (test/integration/local-start.test.ts).
    // With a data directory the object store (import files, inline CSVs, raw mail) lives in it too.
    queue = await startLocalQueue(LOCAL_QUEUES.delivery, { objectDir: opts.dataDir ? `${opts.dataDir}/objects` : undefined });
    const smtpPort = opts.smtpPort ?? (process.env.SMTP_PORT ? Number(process.env.SMTP_PORT) : opts.port ? DEFAULT_SMTP_PORT : 0);
    // The queues, buckets and every binding's variable here (a workers thread copies this environment when it starts).
    const resources = await createLocalResources(FUNCTIONS, { awsEndpoint: queue.endpoint, dynamoEndpoint, tableName, dataDir: opts.dataDir, smtpPort });

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

    // Messages of the in-memory queues die with the process (contract §7): jobs queued or running
    // when the service last stopped are queued again, and every pending delivery that is due (no
    // grace: its message is gone) is enqueued again. Local mode is one process, so a lease still
    // held is the stopped process's: it is released and the job resumes at once.
    await recoverImports({ releaseLeases: true });
    await recoverExports({ releaseLeases: true });
    await recoverErasures({ releaseLeases: true });
    await recoverIndexBuilds({ releaseLeases: true });
    await sweepDueDeliveries({ graceSeconds: 0 });

    const onError: WorkerErrorHandler = opts.onWorkerError ?? (() => undefined);
    workers = opts.workersInThread ? await startWorkersThread(resources, { onError }) : await startBackgroundWorkers(resources, { onError });
    const { functions } = workers;
    const smtpFunction = functionOf(functions, 'object');
    const smtp: SmtpListener = { host: smtpFunction.address!.host, port: smtpFunction.address!.port, idle: () => smtpFunction.drain(), stop: () => smtpFunction.stop() };
    const inboundAddresses = await Promise.all(
      [...new Map(tokens.map((t) => [t.accountId, t])).values()].map(async (t) => ({ accountId: t.accountId, address: (await inboundAddress({ ...t, operation: 'inbound-emails-address', headers: {} })).address })),
    );

    const status = async (): Promise<LocalStatus> => ({ at: new Date().toISOString(), queues: await queueStatuses(queue!.endpoint), functions: await workers!.states() });
    server = createApiServer([statusRoute(status), ...(opts.routes ?? [])], { onRequest: opts.onRequest });
    const srv = server;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      dynamoEndpoint,
      tableName,
      tokens,
      resources,
      functions,
      poller: routedStream(functions),
      deliveryQueueUrl: resources.queueUrls.delivery,
      queueWorker: functionOf(functions, 'queue', 'delivery'),
      imports: { bucket: resources.buckets.imports, queueUrl: resources.queueUrls.imports, worker: functionOf(functions, 'queue', 'imports') },
      exports: { bucket: resources.buckets.imports, queueUrl: resources.queueUrls.exports, worker: functionOf(functions, 'queue', 'exports') },
      erasures: { queueUrl: resources.queueUrls.erasures, worker: functionOf(functions, 'queue', 'erasures') },
      indexBuilds: { queueUrl: resources.queueUrls.indexBuilds, worker: functionOf(functions, 'queue', 'indexBuilds') },
      server,
      smtp,
      inboundAddresses,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
