/**
 * The deployed path of inbound email: the S3 ObjectCreated handler (functions/inbound/process.ts)
 * reading a message stored the way SES's receipt rule stores it, from a local S3 API (fauxqs).
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as inboundHandler } from '../../functions/inbound/process.js';
import { asFunction } from '../../local/iam.js';
import { bindingEnv } from '../../shared/config/bindings.js';
import { functionByName } from '../../functions/topology.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { recipientsOf } from '../../shared/inbound/ses.js';
import { newAccount, ok } from '../helpers/api.js';

const handler = asFunction(functionByName('inbound')!, inboundHandler);

let local: LocalQueue;
let s3: S3Client;
const bucket = 'crm-inbound-test';

beforeAll(async () => {
  process.env.CRM_INBOUND_DOMAIN = 'inbound.example.com';
  // The function's role may read its own bucket only (the binding names it, as the stack does).
  process.env[bindingEnv('inboundBucket')] = bucket;
  local = await startLocalQueue('unused');
  process.env.AWS_ENDPOINT_URL_S3 = local.endpoint;
  s3 = new S3Client({ endpoint: local.endpoint, forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});

afterAll(async () => {
  s3?.destroy();
  await local?.stop();
});

/** The S3 ObjectCreated event as the bucket's queue delivers it (one SQS message). */
const event = (key: string): SQSEvent =>
  ({
    Records: [
      {
        messageId: randomUUID(),
        body: JSON.stringify({ Records: [{ eventTime: '2026-11-22T06:00:00.000Z', s3: { bucket: { name: bucket }, object: { key: encodeURIComponent(key).replace(/%20/g, '+'), size: 0 } } }] }),
      },
    ],
  }) as unknown as SQSEvent;

/** A message as SES stores it: its own Received line names the envelope recipient (here a Bcc). */
const sesMessage = (recipient: string, extra = '') =>
  Buffer.from(
    [
      'Return-Path: <ada@acme.com>',
      `Received: from mail.acme.com (mail.acme.com [192.0.2.1]) by inbound-smtp.eu-west-1.amazonaws.com with SMTP id abc123 for ${recipient}; Sun, 22 Nov 2026 06:00:00 +0000 (UTC)`,
      'X-SES-Spam-Verdict: PASS',
      extra || 'X-SES-Virus-Verdict: PASS',
      'From: Ada <ada@acme.com>',
      'To: Bob <bob@beta.com>',
      'Subject: Deployed path',
      `Message-ID: <${randomUUID()}@acme.com>`,
      '',
      'Logged through SES.',
      '',
    ].join('\r\n'),
  );

describe('inbound email through SES → S3 → Lambda', () => {
  it('finds the recipients in the stored headers (Received for, To, Cc), only of the inbound domain', () => {
    const raw = Buffer.from('Received: by x for KEYabc@Inbound.Example.com; date\r\nTo: a@b.com, other@inbound.example.com.evil\r\nCc: c@inbound.example.com\r\n\r\nbody mentions z@inbound.example.com\r\n');
    expect(recipientsOf(raw, 'inbound.example.com')).toEqual(['keyabc@inbound.example.com', 'c@inbound.example.com']);
  });

  it('stores the message of an ObjectCreated event and logs it on the contacts; a replayed event stores nothing new', async () => {
    const auth = newAccount();
    const { address } = await ok<{ address: string }>('inbound-emails-address', {}, auth);
    expect(address).toMatch(/@inbound\.example\.com$/);
    const bob = await ok<{ id: string }>('contacts-create', { first_name: 'Bob', email: 'bob@beta.com' }, auth);
    const key = `inbound/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: sesMessage(address) }));

    expect(await handler(event(key))).toEqual({ batchItemFailures: [] });
    expect(await handler(event(key))).toEqual({ batchItemFailures: [] });
    const list = await ok<{ items: Array<Record<string, unknown>> }>('inbound-emails-list', {}, auth);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ subject: 'Deployed path', matched_contact_ids: [bob.id], received_at: '2026-11-22T06:00:00.000Z', text: 'Logged through SES.\n' });
    const activity = await ok<Record<string, unknown>>('activities-get', { id: list.items[0]!.activity_id }, auth);
    expect(activity).toMatchObject({ type: 'email', direction: 'outbound', contact_ids: [bob.id] });
  });

  it('skips a message SES marked as a virus, and one for no account', async () => {
    const auth = newAccount();
    const { address } = await ok<{ address: string }>('inbound-emails-address', {}, auth);
    const infected = `inbound/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: infected, Body: sesMessage(address, 'X-SES-Virus-Verdict: FAIL') }));
    const nobody = `inbound/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: nobody, Body: sesMessage(`${'b'.repeat(24)}@inbound.example.com`) }));
    expect(await handler(event(infected))).toEqual({ batchItemFailures: [] });
    expect(await handler(event(nobody))).toEqual({ batchItemFailures: [] });
    expect((await ok<{ items: unknown[] }>('inbound-emails-list', {}, auth)).items).toEqual([]);
  });

  it('skips S3\'s test event and reports a message it cannot read for a retry', async () => {
    const testEvent = { Records: [{ messageId: 'm-test', body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent' }) }] } as unknown as SQSEvent;
    expect(await handler(testEvent)).toEqual({ batchItemFailures: [] });
    expect(await handler(event(`inbound/${randomUUID()}-missing`))).toEqual({ batchItemFailures: [{ itemIdentifier: expect.any(String) }] });
  });
});
