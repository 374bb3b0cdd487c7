import { createHash } from 'node:crypto';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface QueueWorker {
  stop(): Promise<void>;
}

type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface QueueWorkerOptions {
  /** The queue's endpoint (the local queue's URLs carry a host name that need not resolve). */
  endpoint: string;
  queueUrl: string;
  handler: SqsHandler;
  /** Messages per batch (Lambda's SQS default: 10). */
  batchSize?: number;
  /** Batches handled at once (Lambda runs several invocations side by side). */
  concurrency?: number;
  /** Seconds a received message stays invisible; a failed or crashed message comes back after it. */
  visibilityTimeoutSeconds?: number;
  /** Long-poll wait per ReceiveMessage call. */
  waitTimeSeconds?: number;
  onError?: (e: unknown) => void;
}

/** A received SQS message in the shape Lambda's SQS event source mapping delivers. */
function toLambdaRecord(m: Message, queueUrl: string): SQSRecord {
  const name = queueUrl.split('/').pop() ?? 'queue';
  const attrs = m.Attributes ?? {};
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? createHash('md5').update(m.Body ?? '').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${name}`,
    awsRegion: 'us-east-1',
  };
}

/**
 * Polls a (local) SQS queue and invokes the delivery handler with Lambda-shaped SQSEvents, as
 * the SQS event source mapping does: messages the handler reports in batchItemFailures (or all
 * of them when it throws) are left in the queue and come back after the visibility timeout;
 * the rest are deleted.
 */
export function startQueueWorker(opts: QueueWorkerOptions): QueueWorker {
  const sqs = new SQSClient({ endpoint: opts.endpoint, useQueueUrlAsEndpoint: false, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const concurrency = opts.concurrency ?? 4;
  const abort = new AbortController();
  let running = true;
  const inFlight = new Set<Promise<void>>();

  async function handleBatch(messages: Message[]) {
    const event: SQSEvent = { Records: messages.map((m) => toLambdaRecord(m, opts.queueUrl)) };
    let failed: Set<string>;
    try {
      const out = await opts.handler(event);
      failed = new Set((out?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      opts.onError?.(error);
      return; // every message comes back after the visibility timeout
    }
    const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
    if (done.length === 0) return;
    await sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: opts.queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
    );
  }

  const loop = (async () => {
    while (running) {
      try {
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: opts.queueUrl,
            MaxNumberOfMessages: opts.batchSize ?? 10,
            WaitTimeSeconds: opts.waitTimeSeconds ?? 1,
            VisibilityTimeout: opts.visibilityTimeoutSeconds ?? 30,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0) continue;
        const p: Promise<void> = handleBatch(messages)
          .catch((error) => opts.onError?.(error))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      } catch (error) {
        if (!running) break;
        opts.onError?.(error);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();

  return {
    async stop() {
      running = false;
      abort.abort();
      await loop;
      await Promise.allSettled([...inFlight]);
      sqs.destroy();
    },
  };
}
