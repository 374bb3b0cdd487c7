import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { ensureTable, LOCAL_AWS_ENV } from '../../local/dynamo.js';
import { controlTableNameFor } from '../../shared/db/control.js';

/**
 * Each test file gets its own table (created from the shared definition) in its worker's
 * DynamoDB Local (test/helpers/global-setup.ts), so stream workers and queues of one file never
 * see another file's writes.
 */
const endpoints = inject('dynamoEndpoints');
const endpoint = endpoints[(Number(process.env.VITEST_POOL_ID ?? 1) - 1) % endpoints.length]!;
const tableName = `test-${randomUUID()}`;
Object.assign(process.env, LOCAL_AWS_ENV, { DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: tableName, CONTROL_TABLE_NAME: controlTableNameFor(tableName), CURSOR_SECRET: 'test-cursor-secret', POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'CRITICAL' });
// The suite sends many requests quickly from one account: rate limiting is off unless a test
// turns it on (test/integration/rate-limit.test.ts).
process.env.CRM_RATE_LIMIT = '0';
// Local servers a test starts (`npm start`) write their state file here, not in the project (local/state-file.ts).
process.env.CRM_STATE_FILE = join(tmpdir(), `crm-state-${tableName}.json`);

beforeAll(async () => {
  await ensureTable(endpoint, tableName);
});

// The file's tables (records and control) go when the file is done (after the file's own hooks have stopped its
// workers): DynamoDB Local scans the stream records of every table it holds on each stream call,
// so the worker's later files poll their streams faster without this one's.
afterAll(async () => {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await Promise.all(
      [tableName, controlTableNameFor(tableName)].map((TableName) =>
        client.send(new DeleteTableCommand({ TableName })).catch(() => {
          // Already gone, or the instance stopped: nothing to free.
        }),
      ),
    );
  } finally {
    client.destroy();
  }
});

