/**
 * Local mode enforces each function's deployed policy (local/iam.ts over shared/schemas/policies.ts):
 * a read operation works through the local server with its pipeline's writes (rate limit, key
 * use) and enforcement on; a grant removed makes the call fail as AWS would (AccessDeniedException
 * → 500 `<family>.internal`); the evaluator's semantics (explicit Allow, LeadingKeys conditions,
 * each item of a transaction or batch) on generated keys.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { functionByName } from '../../functions/topology.js';
import { AccessDeniedException, enforcementEnabled, localArns, localPolicyOf, overridePolicy, refused, requestsOf, resetPolicy, runAs } from '../../local/iam.js';
import { db } from '../../shared/db/client.js';
import { keys } from '../../shared/db/table.js';
import { policyOf } from '../../shared/schemas/policies.js';
import { ok, startServer, type TestServer } from '../helpers/api.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  process.env.CRM_RATE_LIMIT = '0';
  resetPolicy('contacts-list');
  resetPolicy('contacts-get');
});

const tableName = () => process.env.TABLE_NAME!;
const controlName = () => process.env.CONTROL_TABLE_NAME!;

describe('local mode runs each function with its deployed policy', () => {
  it('is on by default in the tests', () => {
    expect(process.env.CRM_LOCAL_IAM).toBeUndefined();
    expect(enforcementEnabled()).toBe(true);
  });

  it('a read operation works through the local server with the rate limiter on and its key use recorded', async () => {
    process.env.CRM_RATE_LIMIT = '50,50';
    const created = await ok<{ id: string }>('contacts-create', { first_name: 'Ada' }, server.auth);
    for (let i = 0; i < 3; i++) {
      const got = await server.call<{ id: string }>('contacts-get', { id: created.id });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.result!.id).toBe(created.id);
      const listed = await server.call('contacts-list', {});
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    }
    // The pipeline's writes landed in the control table, not in the table.
    const bucket = await db().send(new GetCommand({ TableName: controlName(), Key: keys.rateLimit(server.auth.accountId) }));
    expect(bucket.Item?.tat).toBeGreaterThan(0);
    const inTable = await db().send(new GetCommand({ TableName: tableName(), Key: keys.rateLimit(server.auth.accountId) }));
    expect(inTable.Item).toBeUndefined();
  });

  it('a grant removed: the call fails as AWS would (AccessDeniedException), the API answers 500 <family>.internal', async () => {
    process.env.CRM_RATE_LIMIT = '50,50';
    const before = await server.call('contacts-list', {});
    expect(before.status).toBe(200);
    // The statement that lets the pipeline take a rate-limit token.
    overridePolicy('contacts-list', (statements) => statements.filter((s) => !(s.actions.includes('dynamodb:UpdateItem') && JSON.stringify(s.conditions).includes('#rl'))));
    // The limiter leases tokens (an instance serves up to k requests per bucket write, k ≤ burst/10 = 5
    // here): the call that needs the next lease is the one refused.
    let refusedCall = await server.call('contacts-list', {});
    for (let i = 0; i < 10 && refusedCall.status === 200; i++) refusedCall = await server.call('contacts-list', {});
    expect(refusedCall.status).toBe(500);
    expect(refusedCall.body.error!.code).toBe('contacts.internal');
    resetPolicy('contacts-list');
    expect((await server.call('contacts-list', {})).status).toBe(200);

    // The table's read grant of contacts-get.
    const created = await ok<{ id: string }>('contacts-create', { first_name: 'Grace' }, server.auth);
    overridePolicy('contacts-get', (statements) => statements.filter((s) => s.sid !== 'TableRead'));
    const noRead = await server.call('contacts-get', { id: created.id });
    expect(noRead.status).toBe(500);
    expect(noRead.body.error!.code).toBe('contacts.internal');
  });

  it('refuses with an error shaped like AWS’s, inside a function; calls outside any function are not checked', async () => {
    const get = new GetCommand({ TableName: tableName(), Key: keys.rateLimit('a') });
    const fallback = functionByName('fallback')!;
    const error = await runAs(fallback, () => db().send(get)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccessDeniedException);
    expect((error as AccessDeniedException).name).toBe('AccessDeniedException');
    expect((error as AccessDeniedException).$metadata.httpStatusCode).toBe(400);
    expect((error as Error).message).toContain('dynamodb:GetItem');
    await expect(db().send(get)).resolves.toBeDefined();
  });
});

describe('the evaluator (IAM semantics)', () => {
  const arns = () => localArns();
  const contactsList = () => localPolicyOf(functionByName('contacts-list')!);
  const contactsCreate = () => localPolicyOf(functionByName('contacts-create')!);
  const update = (table: string, key: { pk: string; sk: string }) => requestsOf('DynamoDB', 'UpdateCommand', { TableName: table, Key: key });

  it('a read function may update its account’s rate-limit bucket and key use, for any account, and nothing else of the control table', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.string({ minLength: 1, maxLength: 20 }), (account, keyId, other) => {
        const policy = contactsList();
        expect(refused(policy, update(controlName(), keys.rateLimit(account)))).toBeUndefined();
        expect(refused(policy, update(controlName(), keys.apiKey(account, keyId)))).toBeUndefined();
        // Another partition of the control table, or the bucket's key in the table: refused.
        expect(refused(policy, update(controlName(), { pk: `X#${other}`, sk: 'RL' }))).toBeDefined();
        expect(refused(policy, update(tableName(), keys.rateLimit(account)))).toBeDefined();
        expect(refused(policy, requestsOf('DynamoDB', 'PutCommand', { TableName: controlName(), Item: keys.idempotency(account, 'contacts-create', other) }))).toBeDefined();
      }),
      { numRuns: 50 },
    );
  });

  it('checks every item of a transaction and of a batch: one item outside the grant refuses the call', () => {
    const policy = contactsList();
    const account = randomUUID();
    const system = keys.system('CURSOR_KEY');
    const seed = { Put: { TableName: tableName(), Item: { ...system, v: 1 } } };
    expect(refused(policy, requestsOf('DynamoDB', 'TransactWriteCommand', { TransactItems: [seed] }))).toBeUndefined();
    const withRecord = { Put: { TableName: tableName(), Item: { pk: `A#${account}#c`, sk: 'x' } } };
    expect(refused(policy, requestsOf('DynamoDB', 'TransactWriteCommand', { TransactItems: [seed, withRecord] }))).toMatchObject({ action: 'dynamodb:PutItem', leadingKeys: [`A#${account}#c`] });
    expect(refused(contactsCreate(), requestsOf('DynamoDB', 'TransactWriteCommand', { TransactItems: [seed, withRecord] }))).toBeUndefined();
    const batch = { RequestItems: { [tableName()]: [{ PutRequest: { Item: system } }] } };
    expect(refused(policy, requestsOf('DynamoDB', 'BatchWriteCommand', batch))).toBeDefined();
    expect(refused(contactsCreate(), requestsOf('DynamoDB', 'BatchWriteCommand', batch))).toBeUndefined();
  });

  it('queries the table and its named indexes, with the leading key read from the key condition', () => {
    const policy = contactsList();
    const query = requestsOf('DynamoDB', 'QueryCommand', { TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: '#p = :p AND gsi1sk < :a', ExpressionAttributeNames: { '#p': 'gsi1pk' }, ExpressionAttributeValues: { ':p': 'A#x#c', ':a': 'z' } });
    expect(query).toEqual([{ action: 'dynamodb:Query', resource: `${arns().table}/index/gsi1`, leadingKeys: ['A#x#c'] }]);
    expect(refused(policy, query)).toBeUndefined();
    expect(refused(policy, requestsOf('DynamoDB', 'ScanCommand', { TableName: tableName() }))).toBeDefined();
    expect(refused(policy, requestsOf('DynamoDB', 'QueryCommand', { TableName: tableName(), IndexName: 'other', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'x' } }))).toBeDefined();
  });

  it('names bucket prefixes, queues and keys by ARN: the import worker reads imports/ only, the stream sends to the changes queue only, the changes worker to the delivery queue', () => {
    const worker = localPolicyOf(functionByName('importWorker')!);
    const bucket = process.env.IMPORTS_BUCKET ?? 'crm-imports';
    expect(refused(worker, requestsOf('S3', 'GetObjectCommand', { Bucket: bucket, Key: 'imports/a.csv' }))).toBeUndefined();
    expect(refused(worker, requestsOf('S3', 'HeadObjectCommand', { Bucket: bucket, Key: 'imports/a.csv' }))).toBeUndefined();
    expect(refused(worker, requestsOf('S3', 'GetObjectCommand', { Bucket: bucket, Key: 'exports/a.csv' }))).toBeDefined();
    expect(refused(worker, requestsOf('S3', 'PutObjectCommand', { Bucket: bucket, Key: 'imports/a.csv' }))).toBeDefined();
    const stream = localPolicyOf(functionByName('stream')!);
    expect(refused(stream, requestsOf('SQS', 'SendMessageBatchCommand', { QueueUrl: 'http://127.0.0.1:1/000000000000/crm-changes.fifo' }))).toBeUndefined();
    expect(refused(stream, requestsOf('SQS', 'SendMessageBatchCommand', { QueueUrl: 'http://127.0.0.1:1/000000000000/crm-webhook-deliveries' }))).toBeDefined();
    const changes = localPolicyOf(functionByName('changes')!);
    expect(refused(changes, requestsOf('SQS', 'SendMessageBatchCommand', { QueueUrl: 'http://127.0.0.1:1/000000000000/crm-webhook-deliveries' }))).toBeUndefined();
    expect(refused(stream, requestsOf('SQS', 'SendMessageCommand', { QueueUrl: 'http://127.0.0.1:1/000000000000/crm-imports' }))).toBeDefined();
    expect(refused(stream, requestsOf('KMS', 'DecryptCommand', { KeyId: 'local' }))).toBeDefined();
    expect(refused(localPolicyOf(functionByName('delivery')!), requestsOf('KMS', 'DecryptCommand', { KeyId: 'local' }))).toBeUndefined();
  });

  it('derives the CDK grants and the local check from one declaration (same statements for the same ARNs)', () => {
    for (const name of ['contacts-list', 'contacts-create', 'stream', 'importWorker']) {
      const spec = functionByName(name)!;
      expect(localPolicyOf(spec)).toEqual(policyOf(spec, arns()));
    }
  });
});
