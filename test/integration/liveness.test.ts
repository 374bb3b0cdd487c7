/**
 * The asynchronous half stays alive (docs/architecture.md, "What keeps the asynchronous half
 * alive"): a local consumer whose handler never settles is reported once, naming what it waits
 * on, and restarted: its messages are taken again at once and the group (an account's changes)
 * moves on; a stream batch whose handler throws or is given up is retried, never dropped.
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { type Stall, startQueueWorker } from '../../local/queue-worker.js';

let queue: LocalQueue;
let sqs: SQSClient;
beforeAll(async () => {
  queue = await startLocalQueue('liveness-probe');
  sqs = new SQSClient({ endpoint: queue.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  sqs.destroy();
  await queue.stop();
});

const until = async (ok: () => boolean, what: string, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('drain() of a local FIFO consumer', () => {
  it('waits for a message its handler failed once: it is invisible for a second, not drained', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `drain-${Date.now()}.fifo`, Attributes: { FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } }));
    const handled: string[] = [];
    let failures = 0;
    const worker = startQueueWorker({
      endpoint: queue.endpoint,
      queueUrl: QueueUrl!,
      fifo: true,
      // Receives return at once: idle receives happen while the failed message is invisible.
      waitTimeSeconds: 0,
      handler: async (event: SQSEvent) => {
        const record = event.Records[0]!;
        if (failures++ === 0) return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
        handled.push(record.body);
        return { batchItemFailures: [] };
      },
    });
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm1', MessageGroupId: 'acct-a', MessageDeduplicationId: 'm1' }));
      await until(() => failures === 1, 'the first attempt');
      await worker.drain(10_000);
      expect(handled).toEqual(['m1']);
    } finally {
      await worker.stop();
    }
  });
});

describe('the liveness watch of a local consumer', () => {
  it('reports a FIFO group stuck behind a handler that never settles, and restarts it: the message is taken again and the group moves on in order', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `stuck-${Date.now()}.fifo`, Attributes: { FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } }));
    const seen: string[] = [];
    const stalls: Stall[] = [];
    let calls = 0;
    const worker = startQueueWorker({
      endpoint: queue.endpoint,
      queueUrl: QueueUrl!,
      fifo: true,
      concurrency: 4,
      // Long enough that, without the restart, the message would not come back during the test.
      visibilityTimeoutSeconds: 120,
      watch: { afterMs: 400, checkEveryMs: 50, report: (stall) => stalls.push(stall) },
      handler: async (event: SQSEvent) => {
        const body = event.Records.map((r) => r.body).join(',');
        // The first attempt at the first message hangs for good (a lost answer, a wait with no bound).
        if (calls++ === 0) return new Promise<never>(() => undefined);
        seen.push(body);
        return { batchItemFailures: [] };
      },
    });
    try {
      for (const n of ['m1', 'm2', 'm3']) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: n, MessageGroupId: 'acct-a', MessageDeduplicationId: n }));
      await until(() => seen.length === 3, 'the group to move on');
      expect(seen).toEqual(['m1', 'm2', 'm3']);
      expect(stalls).toHaveLength(1);
      expect(stalls[0]).toMatchObject({ groups: ['acct-a'], messages: 1 });
      expect(stalls[0]!.idleMs).toBeGreaterThanOrEqual(400);
      expect(worker.state()).toMatchObject({ inHand: 0, restarts: 1, finished: 3 });
    } finally {
      await worker.stop();
    }
  });

  it('does not report a slow handler that keeps finishing events', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `slow-${Date.now()}` }));
    const stalls: Stall[] = [];
    let done = 0;
    const worker = startQueueWorker({
      endpoint: queue.endpoint,
      queueUrl: QueueUrl!,
      concurrency: 2,
      watch: { afterMs: 400, checkEveryMs: 50, report: (stall) => stalls.push(stall) },
      handler: async () => {
        await new Promise((r) => setTimeout(r, 150));
        done++;
      },
    });
    try {
      for (let i = 0; i < 8; i++) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: String(i) }));
      await until(() => done === 8, 'every message');
      expect(stalls).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});

describe('the stream poller', () => {
  it('retries, in order, a batch whose handler threw or was given up by the watch: no record is dropped', async () => {
    const { PutItemCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { startStreamPoller } = await import('../../local/stream-poller.js');
    const ddb = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
    const got: string[] = [];
    const stalls: unknown[] = [];
    let calls = 0;
    const poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT!,
      tableName: process.env.TABLE_NAME!,
      intervalMs: 25,
      retryDelayMs: 50,
      watch: { afterMs: 300, checkEveryMs: 50, report: (stall) => stalls.push(stall) },
      handler: async (event) => {
        const n = calls++;
        if (n === 0) throw new Error('the first attempt fails');
        if (n === 1) return new Promise<never>(() => undefined); // the second never settles
        got.push(...event.Records.map((r) => String(r.dynamodb?.Keys?.sk?.S)));
      },
    });
    try {
      for (const sk of ['a', 'b', 'c']) await ddb.send(new PutItemCommand({ TableName: process.env.TABLE_NAME, Item: { pk: { S: 'liveness-probe' }, sk: { S: sk } } }));
      await until(() => got.length >= 3, 'the records');
      expect(got.slice(0, 3)).toEqual(['a', 'b', 'c']);
      expect(stalls).toHaveLength(1);
      expect(poller.state()).toMatchObject({ retrying: 0, inHandlerForMs: 0 });
    } finally {
      await poller.stop();
      ddb.destroy();
    }
  });
});

describe('npm run status (the local queues part)', () => {
  it('lists each queue with its visible, in-flight and delayed messages and the age of its oldest', async () => {
    const { queueStatuses } = await import('../../local/status.js');
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `status-${Date.now()}` }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'old' }));
    await new Promise((r) => setTimeout(r, 50));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'delayed', DelaySeconds: 60 }));
    const mine = (await queueStatuses(queue.endpoint)).find((q) => QueueUrl!.endsWith(`/${q.queue}`));
    expect(mine).toMatchObject({ visible: 1, inFlight: 0, delayed: 1 });
    expect(mine!.oldestAgeMs).toBeGreaterThanOrEqual(50);
  });
});
