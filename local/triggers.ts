/**
 * Local mode's trigger adapters: one per trigger kind of the topology (functions/topology.ts),
 * the local counterpart of lib/function-group.ts's `attach`. The API's kinds (`http`,
 * `authorizer`, `http-default`) are served by the local API server (local/server.ts); the others
 * run here, each invoking the function's handler (loaded from its entry) with the event its
 * deployed trigger delivers:
 *
 * - `stream`: the stream poller on DynamoDB Local (its position file in the data directory);
 * - `queue`: a queue worker on the queue's local URL (batch size, concurrency and the trigger's
 *   `local` options: group, visibility, holding a message while it runs);
 * - `schedule`: a timer (every `local.everySeconds`, else every `everyMinutes`);
 * - `object`: the SMTP listener (the inbound bucket is the only object trigger's): each accepted
 *   message is written to the bucket under the prefix, then the function gets the S3 → SQS event.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent, S3Event, ScheduledEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { FUNCTIONS, type FunctionSpec, type QueueName, type Trigger, type TriggerKind } from '../functions/topology.js';
import { QUEUES } from '../shared/config/bindings.js';
import { loadHandler } from './handlers.js';
import { type QueueWorker, type QueueWorkerOptions, type QueueWorkerState, startQueueWorker, toLambdaRecord } from './queue-worker.js';
import type { LocalResources } from './resources.js';
import { startSmtpListener } from './smtp.js';
import { waitsOf } from './liveness.js';
import { startStreamPoller, type StreamPollerState } from './stream-poller.js';

/** A function of the topology running locally under its trigger's adapter. */
export interface LocalFunction {
  name: string;
  kind: TriggerKind;
  /** Where it listens, when its trigger is a listener (the SMTP listener of an `object` trigger). */
  address?: { host: string; port: number };
  /** Resolves once it is idle (nothing in hand, nothing waiting that is due); for tests and tools. */
  drain(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** Its liveness state (`npm run status`), where its adapter keeps one. */
  state?(): QueueWorkerState | StreamPollerState;
}

export interface TriggerContext {
  resources: LocalResources;
  onError: (error: unknown) => void;
}

type SpecOf<K extends TriggerKind> = FunctionSpec & { trigger: Extract<Trigger, { kind: K }> };
type Adapter<K extends TriggerKind> = (spec: SpecOf<K>, handler: (event: never) => Promise<unknown>, ctx: TriggerContext) => Promise<LocalFunction>;

/** Handlers are invoked with the event only: a local function has no time limit (no context). */
type Handler<E, R> = (event: E) => Promise<R>;

/** The queue worker of a `queue` trigger (also used by local/imports.ts and local/exports.ts with a test's queue or handler). */
export function startQueueTrigger(
  spec: SpecOf<'queue'>,
  handler: Handler<SQSEvent, SQSBatchResponse | void>,
  opts: { endpoint: string; queueUrl: string; onError?: (error: unknown) => void } & Pick<QueueWorkerOptions, 'visibilityTimeoutSeconds'>,
): QueueWorker & { state(): QueueWorkerState } {
  const { batchSize, maxConcurrency, local = {} } = spec.trigger;
  const groupBy = local.groupBy;
  const fifo = QUEUES[spec.trigger.queue] === 'fifo';
  return startQueueWorker({
    endpoint: opts.endpoint,
    queueUrl: opts.queueUrl,
    handler,
    batchSize,
    concurrency: local.concurrency ?? batchSize * maxConcurrency,
    groupOf: groupBy ? (body) => groupOfBody(body, groupBy) : undefined,
    visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds ?? local.visibilityTimeoutSeconds,
    extendWhileHandling: local.extendWhileHandling,
    // A FIFO queue's group (an account) that falls behind is logged, and again once it drained.
    ...(fifo ? { fifo, backlog: { thresholdMs: backlogThresholdMs(), log: (line: string) => console.log(line) } } : {}),
    onError: opts.onError,
    // Short workers only (changes, delivery): a job worker holds one message for a whole job (up
    // to its 15 minutes), and its progress is its job's lease (shared/db/job-lease.ts).
    ...(spec.timeoutSeconds > WATCHED_UP_TO_SECONDS ? {} : { watch: {
      afterMs: STALL_MS,
      report: (stall) =>
        console.error(
          `ERROR ${spec.name}: no progress for ${(stall.idleMs / 1000).toFixed(1)} s with work in hand for ${(stall.oldestMs / 1000).toFixed(1)} s ` +
            `(${stall.queue}, ${stall.messages} message(s), group(s) ${stall.groups.join(', ') || '-'}); waiting on: ${waitsOf(spec.name).join('; ') || 'no AWS call (its own code)'}; ` +
            'restarting its consumer: those messages are visible again now',
        ),
    } }),
  });
}

/**
 * The liveness watch (docs/architecture.md, "What keeps the asynchronous half alive"): a
 * background function with work older than this and no progress for as long is logged at
 * ERROR and its consumer restarted. `CRM_STALL_MS` changes it (tests).
 */
const STALL_MS = Number(process.env.CRM_STALL_MS) > 0 ? Number(process.env.CRM_STALL_MS) : 30_000;
/** Queue workers watched: those whose invocation is short (the changes and delivery workers), not the job workers. */
const WATCHED_UP_TO_SECONDS = 120;

/** `CRM_BACKLOG_THRESHOLD_MS`: how long a group's oldest message may wait before local mode logs the group as behind (default 5 s). */
function backlogThresholdMs(): number {
  const ms = Number(process.env.CRM_BACKLOG_THRESHOLD_MS ?? 5000);
  return Number.isFinite(ms) && ms > 0 ? ms : 5000;
}

function groupOfBody(body: string, field: string): string | undefined {
  try {
    const value = (JSON.parse(body) as Record<string, unknown> | null)?.[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

const stream: Adapter<'stream'> = async (spec, handler, { resources: r, onError }) => {
  const poller = await startStreamPoller({
    endpoint: r.dynamoEndpoint,
    tableName: r.tableName,
    handler: handler as Handler<DynamoDBStreamEvent, never>,
    batchSize: spec.trigger.local?.batchSize ?? spec.trigger.batchSize,
    onError,
    // With a data directory the stream resumes after the last record handled before a restart;
    // when it routes to the changes queue (in memory), after the last one that queue has worked on.
    positionFile: r.dataDir ? join(r.dataDir, `${spec.name}-positions.json`) : undefined,
    canCommit: spec.bindings.changesQueue ? () => queueIsEmpty(r.awsEndpoint, r.queueUrls.changes) : undefined,
    watch: {
      afterMs: STALL_MS,
      report: (stall) =>
        console.error(
          `ERROR ${spec.name}: no stream record handled for ${(stall.idleMs / 1000).toFixed(1)} s with a batch in hand for ${(stall.oldestMs / 1000).toFixed(1)} s ` +
            `(${stall.records} record(s)); waiting on: ${waitsOf(spec.name).join('; ') || 'no AWS call (its own code)'}; the batch is retried`,
        ),
    },
  });
  return { name: spec.name, kind: 'stream', drain: (t) => poller.drain(t), stop: () => poller.stop(), state: () => poller.state() };
};

/** Whether a local queue holds no message, visible, in flight or delayed. */
async function queueIsEmpty(endpoint: string, queueUrl: string): Promise<boolean> {
  const sqs = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }));
    return Object.values(Attributes).every((n) => Number(n) === 0);
  } finally {
    sqs.destroy();
  }
}

const queue: Adapter<'queue'> = async (spec, handler, { resources: r, onError }) => {
  const worker = startQueueTrigger(spec, handler as Handler<SQSEvent, SQSBatchResponse>, { endpoint: r.awsEndpoint, queueUrl: r.queueUrls[spec.trigger.queue], onError });
  return { name: spec.name, kind: 'queue', drain: (t) => worker.drain(t), stop: () => worker.stop(), state: () => worker.state() };
};

/** EventBridge's scheduled event. */
const scheduledEvent = (name: string): ScheduledEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [`arn:aws:events:us-east-1:000000000000:rule/${name}`],
  detail: {},
});

const schedule: Adapter<'schedule'> = async (spec, handler, { onError }) => {
  const everyMs = (spec.trigger.local?.everySeconds ?? spec.trigger.everyMinutes * 60) * 1000;
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const next = () => {
    timer = setTimeout(() => {
      current = (handler as Handler<ScheduledEvent, unknown>)(scheduledEvent(spec.name)).then(
        () => undefined,
        (error: unknown) => onError(error),
      );
      void current.finally(() => {
        if (running) next();
      });
    }, everyMs);
  };
  next();
  return {
    name: spec.name,
    kind: 'schedule',
    drain: () => current,
    async stop() {
      running = false;
      clearTimeout(timer);
      await current;
    },
  };
};

/** S3's ObjectCreated notification of one object, as the bucket sends it to the queue. */
const objectCreated = (bucket: string, key: string, size: number, at: Date): S3Event => ({
  Records: [
    {
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: at.toISOString(),
      eventName: 'ObjectCreated:Put',
      userIdentity: { principalId: 'local' },
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      responseElements: { 'x-amz-request-id': 'local', 'x-amz-id-2': 'local' },
      s3: {
        s3SchemaVersion: '1.0',
        configurationId: 'local',
        bucket: { name: bucket, ownerIdentity: { principalId: 'local' }, arn: `arn:aws:s3:::${bucket}` },
        // Keys arrive URL-encoded (a space as `+`).
        object: { key: encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+'), size, eTag: '', sequencer: '0' },
      },
    },
  ],
});

/** SES's trace header: the stored message names its envelope recipient there (shared/inbound/ses.ts reads it). */
const receivedHeader = (recipient: string, at: Date) => `Received: from localhost (127.0.0.1) by crm.localhost with SMTP for <${recipient}>; ${at.toUTCString()}\r\n`;

const object: Adapter<'object'> = async (spec, handler, { resources: r, onError }) => {
  const bucket = r.buckets[spec.trigger.bucket];
  const s3 = new S3Client({ endpoint: r.awsEndpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const smtp = await startSmtpListener({
    port: r.smtpPort,
    host: '127.0.0.1',
    onError,
    // `250` once the message is stored AND the function took it: a failure answers `451` and the client retries.
    async store(raw, recipients, receivedAt) {
      const body = Buffer.concat([Buffer.from(recipients.map((to) => receivedHeader(to, receivedAt)).join(''), 'latin1'), raw]);
      const key = `${spec.trigger.prefix}${randomUUID()}`;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length }));
      const message = { MessageId: randomUUID(), ReceiptHandle: 'local', Body: JSON.stringify(objectCreated(bucket, key, body.length, receivedAt)) };
      const out = await (handler as Handler<SQSEvent, SQSBatchResponse | void>)({ Records: [toLambdaRecord(message, `local/${spec.name}-events`)] });
      if (out?.batchItemFailures?.length) throw new Error(`${spec.name}: the function failed on ${key}`);
      return key;
    },
  });
  return {
    name: spec.name,
    kind: 'object',
    address: { host: smtp.host, port: smtp.port },
    drain: () => smtp.idle(),
    async stop() {
      await smtp.stop();
      s3.destroy();
    },
  };
};

/**
 * Which local piece runs each trigger kind: `api` (local/server.ts) or an adapter above. A new
 * kind of trigger does not compile until it has one here.
 */
export const LOCAL_TRIGGERS: { [K in TriggerKind]: 'api' | Adapter<K> } = {
  http: 'api',
  authorizer: 'api',
  'http-default': 'api',
  stream,
  queue,
  schedule,
  object,
};

/** Whether the function runs in the background (not in the API server). */
export const runsInBackground = (spec: FunctionSpec): boolean => LOCAL_TRIGGERS[spec.trigger.kind] !== 'api';

/** Starts a function under its trigger's adapter, with its handler loaded from its entry. */
export async function startLocalFunction(spec: FunctionSpec, ctx: TriggerContext): Promise<LocalFunction> {
  const adapter = LOCAL_TRIGGERS[spec.trigger.kind] as 'api' | Adapter<TriggerKind> | undefined;
  if (!adapter) throw new Error(`${spec.name}: no local adapter for trigger kind ${spec.trigger.kind}`);
  if (adapter === 'api') throw new Error(`${spec.name}: the API server runs ${spec.trigger.kind} functions`);
  return adapter(spec, await loadHandler(spec.entry), ctx);
}

/** The function of the topology that the queue triggers. */
export function queueFunction(queue: QueueName, functions: readonly FunctionSpec[] = FUNCTIONS): SpecOf<'queue'> {
  const spec = functions.find((f): f is SpecOf<'queue'> => f.trigger.kind === 'queue' && f.trigger.queue === queue);
  if (!spec) throw new Error(`no function of the topology is triggered by the ${queue} queue`);
  return spec;
}
