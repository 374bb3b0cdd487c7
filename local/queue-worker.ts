import { createHash } from 'node:crypto';
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface QueueWorker {
  stop(): Promise<void>;
  /**
   * Resolves once the worker is idle: no message in hand, and a receive that began after this
   * call (with nothing in hand) found the queue empty. Delayed messages (retries not due yet)
   * do not count. For tests that prove something did NOT happen.
   */
  drain(timeoutMs?: number): Promise<void>;
}

type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface QueueWorkerOptions {
  /** The queue's endpoint (the local queue's URLs carry a host name that need not resolve). */
  endpoint: string;
  queueUrl: string;
  handler: SqsHandler;
  /** Messages per ReceiveMessage call (at most 10). */
  batchSize?: number;
  /** Messages handled at once; each is handled (and deleted) on its own. */
  concurrency?: number;
  /**
   * The group of a message (the delivery worker: its endpoint). At most `perGroupConcurrency`
   * messages of one group are handled at once; a message over that limit is released at once
   * (visible again after a second), so one slow group cannot fill every slot.
   */
  groupOf?: (body: string) => string | undefined;
  perGroupConcurrency?: number;
  /** Seconds a received message stays invisible; a failed or crashed message comes back after it. */
  visibilityTimeoutSeconds?: number;
  /**
   * Keep a message invisible while its handler runs, however long (its visibility is extended
   * every half time-out), like a Lambda still running: long jobs need no long time-out, and a
   * message whose worker died comes back after one time-out.
   */
  extendWhileHandling?: boolean;
  /** Long-poll wait per ReceiveMessage call. */
  waitTimeSeconds?: number;
  onError?: (e: unknown) => void;
}

/** A received SQS message in the shape Lambda's SQS event source mapping delivers. */
export function toLambdaRecord(m: Message, queueUrl: string): SQSRecord {
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
 * Polls a (local) SQS queue and invokes a handler with Lambda-shaped SQSEvents (one message each).
 * Unlike a Lambda batch, every message is handled on its own as soon as it arrives, up to
 * `concurrency` at once (and `perGroupConcurrency` per group), and the next receive starts as
 * soon as a slot is free: a receiver that hangs holds at most its group's slots for one
 * attempt's time-out each and delays nobody else's deliveries. A message the handler reports in
 * batchItemFailures (or that throws) stays in the queue and comes back after the visibility
 * timeout; the others are deleted.
 */
export function startQueueWorker(opts: QueueWorkerOptions): QueueWorker {
  const sqs = new SQSClient({ endpoint: opts.endpoint, useQueueUrlAsEndpoint: false, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const concurrency = opts.concurrency ?? 256;
  const perGroup = opts.perGroupConcurrency ?? 16;
  const groups = new Map<string, number>();
  const abort = new AbortController();
  let running = true;
  const inFlight = new Set<Promise<void>>();
  /** Receives begun, and the number of the latest one that began idle and found nothing. */
  let receives = 0;
  let idleReceive = 0;

  async function handleOne(message: Message) {
    const event: SQSEvent = { Records: [toLambdaRecord(message, opts.queueUrl)] };
    const visibility = opts.visibilityTimeoutSeconds ?? 30;
    const heartbeat = opts.extendWhileHandling
      ? setInterval(() => {
          sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: visibility })).catch((error: unknown) => opts.onError?.(error));
        }, (visibility * 1000) / 2)
      : undefined;
    try {
      const out = await opts.handler(event);
      if (out?.batchItemFailures?.length) return; // comes back after the visibility timeout
    } catch (error) {
      opts.onError?.(error);
      return;
    } finally {
      clearInterval(heartbeat);
    }
    await sqs.send(new DeleteMessageCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: message.ReceiptHandle! }));
  }

  const loop = (async () => {
    while (running) {
      try {
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        const n = ++receives;
        const idleAtStart = inFlight.size === 0;
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: opts.queueUrl,
            MaxNumberOfMessages: Math.min(opts.batchSize ?? 10, concurrency - inFlight.size, 10),
            WaitTimeSeconds: opts.waitTimeSeconds ?? 1,
            VisibilityTimeout: opts.visibilityTimeoutSeconds ?? 30,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0) {
          if (idleAtStart && inFlight.size === 0) idleReceive = n;
          continue;
        }
        for (const message of messages) {
          const group = opts.groupOf?.(message.Body ?? '');
          if (group !== undefined && (groups.get(group) ?? 0) >= perGroup) {
            const release = sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: opts.queueUrl, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 1 }));
            const p: Promise<void> = release.then(() => undefined, (error: unknown) => opts.onError?.(error)).finally(() => inFlight.delete(p));
            inFlight.add(p);
            continue;
          }
          if (group !== undefined) groups.set(group, (groups.get(group) ?? 0) + 1);
          const p: Promise<void> = handleOne(message)
            .catch((error) => opts.onError?.(error))
            .finally(() => {
              inFlight.delete(p);
              if (group !== undefined) {
                const left = (groups.get(group) ?? 1) - 1;
                if (left > 0) groups.set(group, left);
                else groups.delete(group);
              }
            });
          inFlight.add(p);
        }
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
    async drain(timeoutMs = 15_000) {
      const from = receives;
      const deadline = Date.now() + timeoutMs;
      while (!(idleReceive > from && inFlight.size === 0)) {
        if (Date.now() > deadline) throw new Error(`queue ${opts.queueUrl.split('/').pop()} did not drain in time`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
