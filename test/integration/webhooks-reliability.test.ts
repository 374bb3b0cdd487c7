import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import type { AuthContext } from '../../shared/http/operation.js';
import { toRecordChange } from '../../shared/domain/record-change.js';
import { getDelivery, refOf, type StoredDelivery } from '../../shared/webhooks/deliveries.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../../shared/webhooks/pipeline.js';
import { postWebhook } from '../../shared/webhooks/sender.js';
import { dnsResolver } from '../../shared/webhooks/ssrf.js';
import { processDelivery } from '../../shared/webhooks/worker.js';
import { newAccount, ok } from '../helpers/api.js';
import { invokeChanges } from '../helpers/stream.js';
import { deliveriesOf, type Pipeline, Receiver, registerEndpoint, reply, settledDeliveries, startPipeline, waitFor } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_TIMEOUT_MS = '400';

// No stream poller here: each test hands the changes worker (invokeChanges: the changes queue's messages of a stream batch) the batches it wants, replays included.
let pipeline: Pipeline;
let receiver: Receiver;
const realResolve = dnsResolver.resolve;
/** Runs after each post, before the attempt is recorded (a test sets it to simulate a crash there). */
let afterPost: (() => void) | undefined;

beforeAll(async () => {
  receiver = await new Receiver().start();
  pipeline = await startPipeline({
    stream: false,
    visibilityTimeoutSeconds: 1,
    workerDeps: {
      post: async (args) => {
        const result = await postWebhook(args);
        afterPost?.();
        return result;
      },
    },
  });
});
afterAll(async () => {
  await pipeline?.stop();
  await receiver?.close();
});
beforeEach(() => {
  process.env.WEBHOOK_RETRY_DELAYS = '0,0,0';
});
afterEach(() => {
  afterPost = undefined;
  dnsResolver.resolve = realResolve;
});

let seq = 0;
/** A Lambda-shaped stream batch with the INSERT of a stored contact, as the event source would replay it. */
async function insertEvent(auth: AuthContext, contactId: string): Promise<DynamoDBStreamEvent> {
  const item = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.record(auth.accountId, 'contact', contactId) }))).Item!;
  seq += 1;
  return {
    Records: [
      {
        eventID: `test-event-${contactId}`,
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        awsRegion: 'us-east-1',
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
          NewImage: marshall(item, { removeUndefinedValues: true }) as never,
          SequenceNumber: String(1000 + seq),
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      },
    ],
  };
}

const failOnce = (what: string) => {
  let armed = true;
  return () => {
    if (!armed) return;
    armed = false;
    throw new Error(`simulated crash: ${what}`);
  };
};

describe('webhook delivery: idempotency and at-least-once', () => {
  it('a replayed stream batch creates no duplicate delivery', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/dup', ['contact.created']);
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Once' }, auth);
    const event = await insertEvent(auth, contact.id);
    expect(await invokeChanges(event)).toEqual({ batchItemFailures: [] });
    expect(await invokeChanges(event)).toEqual({ batchItemFailures: [] });
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    await pipeline.idle();
    expect(await deliveriesOf(auth, endpoint.id)).toHaveLength(1);
    expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1, event_id: `test-event-${contact.id}` });
    expect(receiver.at('/dup')).toHaveLength(1);
    // A replay after delivery changes nothing either.
    await invokeChanges(event);
    await pipeline.idle();
    expect(receiver.at('/dup')).toHaveLength(1);
  });

  it('a crash between the delivery write and the queue write loses nothing: the replay enqueues it', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/crash-stream', ['contact.created']);
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Crash' }, auth);
    const event = await insertEvent(auth, contact.id);
    // The stream consumer dies after writing the delivery record, before the queue message is sent.
    const crash = failOnce('after delivery write');
    const change = toRecordChange(event.Records[0]!)!;
    await expect(enqueueWebhookDeliveries(change, new WebhookBatchCache(), { enqueue: async () => crash() })).rejects.toThrow('simulated crash');
    const [stuck] = await deliveriesOf(auth, endpoint.id);
    expect(stuck).toMatchObject({ status: 'pending', attempt_count: 0 });
    await pipeline.idle();
    expect(receiver.at('/crash-stream')).toHaveLength(0);

    expect(await invokeChanges(event)).toEqual({ batchItemFailures: [] }); // the event source retries the batch
    const [done] = await settledDeliveries(auth, endpoint.id, 1);
    expect(done).toMatchObject({ id: stuck!.id, status: 'delivered', attempt_count: 1 });
    expect(receiver.at('/crash-stream')).toHaveLength(1);
    expect(receiver.at('/crash-stream')[0]!.verified).toBe(true);
  });

  it('a crash between the post and the record loses nothing: the attempt is re-run with the same webhook-id', async () => {
    const auth = newAccount();
    const endpoint = await registerEndpoint(auth, receiver, '/crash-worker', ['contact.created']);
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Worker' }, auth);
    afterPost = failOnce('after post');
    await invokeChanges(await insertEvent(auth, contact.id));
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1, 15_000);
    expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1, http_status_code: 200 });
    const got = receiver.at('/crash-worker');
    expect(got).toHaveLength(2); // at least once: the receiver saw it twice, under one id
    expect(got.every((r) => r.verified && r.headers['webhook-id'] === delivery!.id)).toBe(true);
  });

  it('waits longer than SQS allows by re-enqueueing until next_attempt_at', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '3600';
    const auth = newAccount();
    receiver.on('/much-later', reply(500));
    const endpoint = await registerEndpoint(auth, receiver, '/much-later', ['contact.created']);
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Patient' }, auth);
    await invokeChanges(await insertEvent(auth, contact.id));
    const [pending] = await waitFor(async () => {
      const ds = await deliveriesOf(auth, endpoint.id);
      return ds[0]?.attempt_count === 1 && ds[0].last_error === 'HTTP 500' ? ds : undefined;
    }, 5_000, 'first attempt');
    expect(Date.parse(pending!.next_attempt_at!) - Date.now()).toBeGreaterThan(3_500_000);
    const delayedUntil = () => (pipeline.queue.inspectQueue(pipeline.queueName)?.messages.delayed ?? []).map((m) => m.delayUntil ?? 0);
    await waitFor(() => delayedUntil().length > 0, 5_000, 'the delayed retry message');
    expect(Math.max(...delayedUntil()) - Date.now()).toBeGreaterThan(890_000); // capped at 900 s

    // A message received before next_attempt_at (the capped delay ran out) is re-sent, not attempted.
    const stored = (await db().send(new GetCommand({ TableName: tableName(), Key: keys.webhookDelivery(auth.accountId, endpoint.id, pending!.created_at, pending!.id) }))).Item as StoredDelivery;
    const before = delayedUntil().length;
    expect(await processDelivery(refOf(stored))).toBe('rescheduled');
    // (a slow first attempt may have let the 1 s visibility timeout lapse once: duplicates are allowed)
    expect(delayedUntil().length).toBeGreaterThan(before);
    expect(Math.max(...delayedUntil()) - Date.now()).toBeLessThanOrEqual(900_000);
    expect((await getDelivery(refOf(stored)))!.attempt_count).toBe(1);
    expect(receiver.at('/much-later')).toHaveLength(1);
  });

  it('re-checks the address at every attempt: a name that now resolves to a private address is not contacted', async () => {
    process.env.WEBHOOK_RETRY_DELAYS = '0';
    const auth = newAccount();
    let answer = '93.184.216.34';
    dnsResolver.resolve = async (host) => (host === 'rebind.example' ? [{ address: answer, family: 4 }] : realResolve(host));
    const { endpoint } = await ok<{ endpoint: { id: string } }>('webhooks-create', { url: 'https://rebind.example/hook', events: ['contact.created'] }, auth);
    answer = '10.0.0.7';
    const contact = await ok<{ id: string }>('contacts-create', { first_name: 'Rebind' }, auth);
    await invokeChanges(await insertEvent(auth, contact.id));
    const [delivery] = await settledDeliveries(auth, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 2, http_status_code: null });
    expect(delivery!.last_error).toContain('10.0.0.7 is not allowed (private)');
  });
});
