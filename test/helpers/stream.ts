/**
 * The record changes' path of a test file, as `npm start` runs it (local/runtime.ts
 * `startRoutedStream`): the stream function routes each batch to the changes queue (FIFO, one
 * message group per account) and the changes worker does the per-account work (the change log,
 * search entries, fan-out, webhook deliveries), each with its handler and its grants. The queues
 * are the file's own in-process SQS (fauxqs, `fileQueues`, or the file's own queue server)
 * beside its table in its worker's DynamoDB Local (test/helpers/global-setup.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll } from 'vitest';
import { functionByName } from '../../functions/topology.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { toLambdaRecord } from '../../local/queue-worker.js';
import { ensureQueue, LOCAL_BUCKETS, LOCAL_QUEUES } from '../../local/resources.js';
import type { StreamPoller } from '../../local/stream-poller.js';
import { bindingEnv, QUEUE_NAMES, queueBinding, type QueueName } from '../../shared/config/bindings.js';
import { planMessages } from '../../shared/stream/route.js';

let queues: Promise<LocalQueue> | undefined;

/**
 * This file's SQS/S3 (local mode's fauxqs in this process, on 127.0.0.1: local/queue.ts), started
 * on first use and stopped after the file. One per file: the process's SQS clients
 * (shared/webhooks/queue.ts) read AWS_ENDPOINT_URL_SQS once, so a file keeps its queues on one server.
 */
export function fileQueues(): Promise<LocalQueue> {
  queues ??= startLocalQueue('crm-test-unused').then((q) => {
    process.env.AWS_ENDPOINT_URL_SQS = q.endpoint;
    return q;
  });
  return queues;
}

afterAll(async () => {
  await (await queues)?.stop();
});

/**
 * Starts the stream function and the changes worker on this file's table, the changes queue on
 * `awsEndpoint` (the file's own queue server, when it has one) or else on `fileQueues()`.
 * drain(): every record written so far routed and its changes worked on.
 */
export async function startTestStream(opts: { awsEndpoint?: string; onError?: (error: unknown) => void } = {}): Promise<StreamPoller> {
  const endpoint = opts.awsEndpoint ?? (await fileQueues()).endpoint;
  const changes = await ensureQueue(endpoint, `${LOCAL_QUEUES.changes.replace(/\.fifo$/, '')}-${process.env.TABLE_NAME}.fifo`, 'fifo');
  process.env[bindingEnv('changesQueue')] = changes;
  // The path's functions use the changes queue (and the delivery queue when the file has one: test/helpers/webhook-harness.ts).
  const queueUrls = Object.fromEntries(QUEUE_NAMES.map((q) => [q, process.env[bindingEnv(queueBinding(q))] ?? ''])) as Record<QueueName, string>;
  // Loaded on first use: most files that import the test helpers never start the stream.
  const { startRoutedStream } = await import('../../local/runtime.js');
  return startRoutedStream(
    { awsEndpoint: endpoint, dynamoEndpoint: process.env.DYNAMODB_ENDPOINT!, tableName: process.env.TABLE_NAME!, queueUrls: { ...queueUrls, changes }, buckets: { ...LOCAL_BUCKETS }, smtpPort: 0 },
    { onError: (_fn, error) => opts.onError?.(error) },
  );
}

/**
 * The changes queue's messages for a stream batch (what the stream function sends: one message
 * per account and size cut, shared/stream/route.ts) as the SQS event the changes worker gets.
 * For tests that hand the changes worker a batch themselves, a replay as SQS redelivers it included.
 */
export function changesEvent(batch: DynamoDBStreamEvent): SQSEvent {
  const queueUrl = `local/${LOCAL_QUEUES.changes}`;
  return {
    Records: planMessages(batch.Records).map((m) => {
      const record = toLambdaRecord({ MessageId: randomUUID(), ReceiptHandle: randomUUID(), Body: m.body }, queueUrl);
      return { ...record, attributes: { ...record.attributes, MessageGroupId: m.group, MessageDeduplicationId: m.dedup } };
    }),
  };
}

/** Invokes the changes function (as `npm start` loads it: its grants, its time limit) with a stream batch's messages. */
export async function invokeChanges(batch: DynamoDBStreamEvent): Promise<SQSBatchResponse> {
  const { loadHandler } = await import('../../local/handlers.js');
  const handler = await loadHandler<(event: SQSEvent) => Promise<SQSBatchResponse>>(functionByName('changes')!.entry);
  return handler(changesEvent(batch));
}

/**
 * The index-build queue on this file's SQS, its URL in the binding the functions read: for files
 * whose writes queue a job there (a pipelines-update that moves or restates stages) without
 * running it.
 */
export async function fileIndexBuildQueue(): Promise<string> {
  const url = await ensureQueue((await fileQueues()).endpoint, `${LOCAL_QUEUES.indexBuilds}-${process.env.TABLE_NAME}`);
  process.env[bindingEnv('indexBuildsQueue')] = url;
  return url;
}
