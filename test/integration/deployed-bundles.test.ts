/**
 * The deployed artifacts run: every function of the topology, built as `cdk synth` builds it, is
 * loaded and invoked with the event its deployed trigger sends, as the synthesized template wires
 * it (test/helpers/deployed.ts), against DynamoDB Local and a local SQS/S3 (fauxqs):
 *
 * - each API operation through its route: the REQUEST authorizer's bundle is invoked first (payload
 *   format 2.0, simple responses) and its context goes into the route's event, as API Gateway does;
 *   the answer must be the one the local server (`npm start`) gives for the same call;
 * - the `$default` route's fallback; the stream worker with the table's own stream records; the
 *   queue workers with SQS batches (partial failures); the sweeper with EventBridge's scheduled
 *   event; inbound mail with S3's notification delivered through SQS.
 *
 * A bundle that fails to load, an environment variable the template sets that cannot be given a
 * local value, or an event field a handler misreads fails here. The same build holds the bundles
 * to their limits: every API operation within 300 KB, credentials from the environment (no SSO
 * provider), idempotency on the bundled JMESPath.
 */
import { statSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionSpec } from '../../functions/topology.js';
import { type LocalQueue, startLocalQueue } from '../../local/queue.js';
import { toLambdaRecord } from '../../local/stream-poller.js';
import { issueToken } from '../../shared/auth/tokens.js';
import { startServer, type TestServer } from '../helpers/api.js';
import {
  authorizerEvent,
  bundleInputs,
  type Deployment,
  type Handler,
  httpApiEvent,
  lambdaContextOf,
  loadBundle,
  resolveEnvironment,
  s3NotificationBody,
  scheduledEvent,
  sharedDeployedBuild,
  sqsEvent,
  synthesizedDeployment,
} from '../helpers/deployed.js';

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** The limiter is on (the stack's RateLimit parameter), at a limit the test never reaches. */
const RATE_LIMIT = '1000,2000';

let deployment: Deployment;
/** Every function's bundle file, and esbuild's metafile of the build. */
let built: Awaited<ReturnType<typeof sharedDeployedBuild>>;
const handlers = new Map<string, Handler>();
let aws: LocalQueue;
let sqs: SQSClient;
let s3: S3Client;
let server: TestServer;
/** Local URL and ARN of each queue of the template, by logical id; local name of each bucket. */
const queues = new Map<string, { url: string; arn: string }>();
const buckets = new Map<string, string>();
const saved = { ...process.env };

const spec = (name: string): FunctionSpec => FUNCTIONS.find((f) => f.name === name)!;
const invoke = (name: string, event: unknown) => handlers.get(name)!(event, lambdaContextOf(spec(name)));
const queueOf = (name: string) => queues.get(deployment.functions.get(name)!.mappings[0]!.source)!;

beforeAll(async () => {
  deployment = synthesizedDeployment();
  // The run's one build of the bundles (the CLI synth of test/cdk/stack.test.ts copies the same files).
  built = await sharedDeployedBuild();
  const { files } = built;
  aws = await startLocalQueue('crm-deployed-unused');
  sqs = new SQSClient({ endpoint: aws.endpoint, region: 'us-east-1', credentials: CREDENTIALS });
  s3 = new S3Client({ endpoint: aws.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
  for (const [id, r] of Object.entries(deployment.resources)) {
    if (r.Type === 'AWS::SQS::Queue') {
      // A FIFO queue as the template declares it (the changes queue: one message group per account).
      const props = (r.Properties ?? {}) as { FifoQueue?: boolean; ContentBasedDeduplication?: boolean };
      const name = props.FifoQueue ? `deployed-${id}.fifo` : `deployed-${id}`;
      const attributes = props.FifoQueue ? { FifoQueue: 'true', ...(props.ContentBasedDeduplication ? { ContentBasedDeduplication: 'true' } : {}) } : undefined;
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, ...(attributes ? { Attributes: attributes } : {}) }));
      queues.set(id, { url: QueueUrl!, arn: `arn:aws:sqs:us-east-1:123456789012:${name}` });
    }
    if (r.Type === 'AWS::S3::Bucket') {
      buckets.set(id, `deployed-${id.toLowerCase()}`);
      await s3.send(new CreateBucketCommand({ Bucket: `deployed-${id.toLowerCase()}` }));
    }
  }
  // The environment each function gets in the template, each reference given its local resource.
  const env: Record<string, string> = {};
  for (const fn of deployment.functions.values()) {
    const resolved = resolveEnvironment(deployment, fn, ({ id, type }) => {
      if (type === 'AWS::DynamoDB::Table') return process.env.TABLE_NAME;
      if (type === 'parameter' && id === 'RateLimit') return RATE_LIMIT;
      if (type === 'AWS::SQS::Queue') return queues.get(id)?.url;
      if (type === 'AWS::S3::Bucket') return buckets.get(id);
      // The webhook secrets' KMS key: local mode stands in with its local key when the variable is empty (shared/db/secret-box.ts).
      if (type === 'AWS::KMS::Key') return '';
      return undefined;
    });
    for (const [name, value] of Object.entries(resolved)) {
      if (name in env && env[name] !== value) throw new Error(`${name} differs between functions: ${env[name]} / ${value}`);
      env[name] = value;
    }
  }
  delete env.NODE_OPTIONS;
  // The dev stage logs at DEBUG; the suite keeps its own level.
  env.POWERTOOLS_LOG_LEVEL = process.env.POWERTOOLS_LOG_LEVEL ?? 'CRITICAL';
  for (const [name, value] of Object.entries(env)) {
    if (value === '') delete process.env[name];
    else process.env[name] = value;
  }
  Object.assign(process.env, { AWS_ENDPOINT_URL_SQS: aws.endpoint, AWS_ENDPOINT_URL_S3: aws.endpoint });
  for (const [name, file] of files) handlers.set(name, await loadBundle(file));
  server = await startServer();
}, 600_000);

afterAll(async () => {
  await server?.close();
  sqs?.destroy();
  s3?.destroy();
  await aws?.stop();
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

describe('every function of the topology, as deployed', () => {
  it('has a bundle that loads, and the template wires it as its trigger says', () => {
    expect([...handlers.keys()].sort()).toEqual(FUNCTIONS.map((f) => f.name).sort());
    expect([...deployment.functions.keys()].sort()).toEqual(FUNCTIONS.map((f) => f.name).sort());
    for (const f of FUNCTIONS) {
      const d = deployment.functions.get(f.name)!;
      const t = f.trigger;
      if (t.kind === 'http') expect([d.routeKeys, d.payloadFormat], f.name).toEqual([[`POST /api/${t.operation}`], '2.0']);
      if (t.kind === 'http-default') expect(d.routeKeys, f.name).toEqual(['$default']);
      if (t.kind === 'authorizer') expect(deployment.authorizer).toMatchObject({ functionName: f.name, type: 'REQUEST', simpleResponses: true, payloadFormat: '2.0' });
      if (t.kind === 'stream') expect(d.mappings).toEqual([{ source: expect.any(String), sourceType: 'AWS::DynamoDB::Table', batchSize: t.batchSize, responseTypes: ['ReportBatchItemFailures'], streamArn: true }]);
      if (t.kind === 'queue' || t.kind === 'object') expect(d.mappings, f.name).toEqual([{ source: expect.any(String), sourceType: 'AWS::SQS::Queue', batchSize: t.batchSize, responseTypes: ['ReportBatchItemFailures'], streamArn: false }]);
      if (t.kind === 'object') expect(deployment.notifications).toContainEqual({ bucket: expect.any(String), queue: d.mappings[0]!.source, event: 's3:ObjectCreated:*', prefix: t.prefix });
      if (t.kind === 'schedule') expect(d.schedules, f.name).toEqual([`rate(${t.everyMinutes} minute${t.everyMinutes === 1 ? '' : 's'})`]);
    }
  });
});

/** Every API operation's bundle ≤ 300 KB (docs/performance.md, "Cold start"). */
const API_BUNDLE_LIMIT = 300 * 1024;

/**
 * The largest operation of each kind (kinds share their modules, so the largest stands for the
 * rest: a record family's operations carry its own definition only, and the activities' is the
 * largest). `npm run bench:bundles` sizes every one.
 */
const REPRESENTATIVES = [
  'contacts-get',
  'activities-list', // the list engine, which the record writes do not carry
  'activities-update',
  'contacts-merge',
  'trash-list',
  'exports-get', // presigned URL without the S3 client
  'exports-list',
  'webhooks-update', // KMS user
  'custom-fields-update',
  'contacts-batch-get', // one batch function, not the whole batch service
  'inbound-emails-get', // not the whole record service
  'imports-start', // HEAD through fetch, without the S3 client
  'webhooks-test', // SQS client; URL checks on Node's BlockList (no ipaddr.js)
  'webhooks-rotate-secret', // KMS user
  'activities-create', // Powertools idempotency on the field-path JMESPath (lib/jmespath-fields.ts)
  'activities-batch-create',
  'contacts-batch-upsert',
  'webhooks-create', // idempotency + KMS + URL checks; event names written out
  'exports-create', // idempotency + SendMessage through fetch (no SQS client), no presigner
  'imports-create', // idempotency (the inline file is a PUT through fetch, the job's message SendMessage through fetch)
  'custom-fields-create',
  'erasures-create', // idempotency + SendMessage through fetch + the contact it erases, read by type (no record store)
];

describe('the bundles as built (the stack\'s esbuild settings)', () => {
  it('take credentials from the environment: the Lambda stand-in, never the SSO provider', () => {
    for (const op of ['contacts-create', 'contacts-get']) {
      const inputs = bundleInputs(built.metafile, built.files.get(op)!);
      expect(inputs.some((f) => f.includes('credential-provider-sso')), op).toBe(false);
      expect(inputs.some((f) => f.includes('lambda-credentials')), op).toBe(true);
    }
  });

  it('the largest operation of each kind is within 300 KB', () => {
    const sizes = REPRESENTATIVES.map((name) => {
      const bytes = statSync(built.files.get(name)!).size;
      return { name, kb: Math.round(bytes / 102.4) / 10, over: bytes > API_BUNDLE_LIMIT };
    });
    expect(sizes.filter((s) => s.over)).toEqual([]);
  });
});

/** Calls an operation as API Gateway would: the authorizer's bundle on the request, then the route's bundle with its context. */
async function throughGateway(op: string, body: string, opts: { token?: string; headers?: Record<string, string>; base64?: boolean } = {}) {
  const routeKey = `POST /api/${op}`;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}), ...opts.headers };
  const auth = (await invoke('authorizer', authorizerEvent(deployment, routeKey, 'POST', `/api/${op}`, headers))) as { isAuthorized: boolean; context: Record<string, unknown> };
  expect(auth.isAuthorized).toBe(true);
  const res = (await invoke(op, httpApiEvent({ routeKey, method: 'POST', path: `/api/${op}`, headers, body, base64: opts.base64, authorizer: auth.context }))) as {
    statusCode: number;
    headers?: Record<string, string>;
    body: string;
  };
  return { status: res.statusCode, headers: res.headers ?? {}, body: JSON.parse(res.body) as { ok: boolean; result?: Record<string, unknown>; error?: { code: string } } };
}

describe('API operations through their route and the authorizer', () => {
  it('every operation answers an empty body as the local server does (never a 500), with the rate-limit headers', { timeout: 300_000 }, async () => {
    const token = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
    const ops = FUNCTIONS.flatMap((f) => (f.trigger.kind === 'http' ? [f.trigger.operation] : []));
    const differences: unknown[] = [];
    // The operations are independent (empty bodies, one account): eight at a time.
    const next = ops.values();
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (const op of next) {
        const [deployed, local] = await Promise.all([throughGateway(op, '{}', { token }), server.call(op, {})]);
        const got = { op, status: deployed.status, code: deployed.body.error?.code ?? null, limit: deployed.headers['RateLimit-Limit'] };
        const want = { op, status: local.status, code: local.body.error?.code ?? null, limit: RATE_LIMIT.split(',')[1] };
        if (deployed.status >= 500 || JSON.stringify(got) !== JSON.stringify(want)) differences.push({ got, want });
      }
    }));
    expect(differences).toEqual([]);
  });

  it('a record made, read and listed through the bundles; base64 bodies and mixed-case headers as API Gateway passes them', async () => {
    const token = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
    const created = await throughGateway('contacts-create', JSON.stringify({ first_name: 'Deployed', email: 'deployed@example.com' }), { token, base64: true, headers: { 'Idempotency-Key': 'deployed-1' } });
    expect(created.status).toBe(200);
    const id = created.body.result!.id as string;
    const again = await throughGateway('contacts-create', JSON.stringify({ first_name: 'Deployed', email: 'deployed@example.com' }), { token, headers: { 'IDEMPOTENCY-KEY': 'deployed-1' } });
    expect(again.body.result).toEqual(created.body.result);
    // Idempotency runs on the bundled field-path JMESPath (lib/jmespath-fields.ts): the same key with another body is a conflict.
    const other = await throughGateway('contacts-create', JSON.stringify({ first_name: 'Twice' }), { token, headers: { 'Idempotency-Key': 'deployed-1' } });
    expect([other.status, other.body.error?.code]).toEqual([409, 'contacts.conflict']);
    expect((await throughGateway('contacts-get', JSON.stringify({ id }), { token })).body.result).toMatchObject({ id, first_name: 'Deployed' });
    expect((await throughGateway('contacts-list', '{}', { token })).body.result).toMatchObject({ items: [expect.objectContaining({ id })] });
    // An unknown or revoked token: the authorizer lets it through with an empty context; the operation answers 401.
    const anonymous = await throughGateway('contacts-list', '{}', { token: 'crm_nobodyHasThisTokenAtAll000000000000000000' });
    expect([anonymous.status, anonymous.body.error?.code]).toEqual([401, 'auth.unauthorized']);
  });

  it('the $default route: an unknown operation is 404, another method on a known one 405', async () => {
    const call = async (method: string, path: string) => {
      const res = (await invoke('fallback', httpApiEvent({ routeKey: '$default', method, path, headers: {} }))) as { statusCode: number; body: string };
      return [res.statusCode, (JSON.parse(res.body) as { error: { code: string } }).error.code];
    };
    expect(await call('POST', '/api/contacts-gett')).toEqual([404, 'api.unknown_operation']);
    expect(await call('GET', '/api/contacts-get')).toEqual([405, 'api.method_not_allowed']);
  });
});

/** Every record of the table's stream so far, as Lambda's event source mapping delivers them. */
async function streamRecords() {
  const cfg = { endpoint: process.env.DYNAMODB_ENDPOINT, region: 'us-east-1', credentials: CREDENTIALS };
  const ddb = new DynamoDBClient(cfg);
  const streams = new DynamoDBStreamsClient(cfg);
  try {
    const streamArn = (await ddb.send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }))).Table!.LatestStreamArn!;
    const records: _Record[] = [];
    for (const shard of (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? []) {
      let iterator = (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator;
      while (iterator) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        records.push(...(page.Records ?? []));
        if (!page.Records?.length) break;
        iterator = page.NextShardIterator;
      }
    }
    return records.map((r) => toLambdaRecord(r, streamArn));
  } finally {
    ddb.destroy();
    streams.destroy();
  }
}

async function receiveAll(queueUrl: string) {
  const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
  for (const m of out.Messages ?? []) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
  return (out.Messages ?? []).map((m) => m.Body!);
}

describe('workers with their triggers\' events', () => {
  it('the stream function routes the table\'s own stream records (NEW_AND_OLD_IMAGES, eventSourceARN) to the changes queue, whose worker logs the changes', { timeout: 120_000 }, async () => {
    const token = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
    const made = await throughGateway('contacts-create', JSON.stringify({ first_name: 'Streamed' }), { token });
    await throughGateway('contacts-update', JSON.stringify({ id: made.body.result!.id, last_name: 'Along' }), { token });
    const records = await streamRecords();
    expect(records.length).toBeGreaterThan(0);
    expect(records[0]).toMatchObject({ eventSource: 'aws:dynamodb', eventSourceARN: expect.stringMatching(/^arn:aws:dynamodb:/), dynamodb: { StreamViewType: 'NEW_AND_OLD_IMAGES', SequenceNumber: expect.any(String) } });
    const batchSize = deployment.functions.get('stream')!.mappings[0]!.batchSize!;
    for (let i = 0; i < records.length; i += batchSize) expect(await invoke('stream', { Records: records.slice(i, i + batchSize) })).toEqual({ batchItemFailures: [] });
    // The stream only routes: nothing is logged until the changes worker runs the routed messages.
    const routed: string[] = [];
    for (let bodies = await receiveAll(queueOf('changes').url); bodies.length > 0; bodies = await receiveAll(queueOf('changes').url)) routed.push(...bodies);
    expect(routed.length).toBeGreaterThan(0);
    expect(await invoke('changes', sqsEvent(queueOf('changes').arn, routed))).toEqual({ batchItemFailures: [] });
    const events = await throughGateway('events-list', '{}', { token });
    expect(events.status).toBe(200);
    expect((events.body.result!.items as { event: string }[]).map((e) => e.event)).toEqual(expect.arrayContaining(['contact.created', 'contact.updated']));
  });

  it('export and import jobs: the API bundle enqueues, the worker bundle runs the SQS message; a malformed message is dropped, not retried', { timeout: 120_000 }, async () => {
    const token = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
    const imported = await throughGateway('imports-create', JSON.stringify({ object_type: 'contacts', csv: 'First Name,Email\nAda,ada@example.com\n' }), { token });
    expect(imported.status).toBe(200);
    const importBodies = await receiveAll(queueOf('importWorker').url);
    expect(importBodies).toHaveLength(1);
    expect(await invoke('importWorker', sqsEvent(queueOf('importWorker').arn, [...importBodies, 'not json']))).toEqual({ batchItemFailures: [] });
    expect((await throughGateway('imports-get', JSON.stringify({ id: imported.body.result!.id }), { token })).body.result).toMatchObject({ status: 'completed' });

    const exported = await throughGateway('exports-create', JSON.stringify({ object_type: 'contacts' }), { token });
    expect(exported.status).toBe(200);
    const exportBodies = await receiveAll(queueOf('exportWorker').url);
    expect(exportBodies).toHaveLength(1);
    expect(await invoke('exportWorker', sqsEvent(queueOf('exportWorker').arn, exportBodies))).toEqual({ batchItemFailures: [] });
    expect((await throughGateway('exports-get', JSON.stringify({ id: exported.body.result!.id }), { token })).body.result).toMatchObject({ status: 'completed' });
  });

  it('webhook deliveries: an SQS batch of a malformed and an unknown delivery answers no failure; the sweeper runs on the scheduled event', async () => {
    const queue = queueOf('delivery');
    expect(await invoke('delivery', sqsEvent(queue.arn, ['{', JSON.stringify({ delivery_id: crypto.randomUUID(), account_id: crypto.randomUUID() })]))).toEqual({ batchItemFailures: [] });
    await expect(invoke('sweeper', scheduledEvent('crm-dev-sweeper'))).resolves.not.toThrow();
  });

  it('inbound mail: S3\'s notification through SQS; the message whose object is missing comes back as the batch\'s one failure', async () => {
    const token = await issueToken({ accountId: crypto.randomUUID(), userId: crypto.randomUUID() });
    const { address } = (await throughGateway('inbound-emails-address', '{}', { token })).body.result as { address: string };
    const { bucket: bucketId, prefix } = deployment.notifications[0]!;
    const bucket = buckets.get(bucketId)!;
    const key = `${prefix}${crypto.randomUUID()}`;
    const raw = ['From: Ada <ada@acme.com>', `To: ${address}`, 'Subject: Deployed mail', `Message-ID: <${crypto.randomUUID()}@acme.com>`, '', 'Hello.', ''].join('\r\n');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: raw }));
    const event = sqsEvent(queueOf('inbound').arn, [s3NotificationBody(bucket, key, raw.length), s3NotificationBody(bucket, `${prefix}missing-${crypto.randomUUID()}`, 10)]);
    expect(await invoke('inbound', event)).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[1]!.messageId }] });
    const list = await throughGateway('inbound-emails-list', '{}', { token });
    expect(list.body.result!.items).toEqual([expect.objectContaining({ subject: 'Deployed mail' })]);
  });
});
