import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { ensureTable, LOCAL_AWS_ENV } from '../../local/dynamo.js';

/**
 * Each test file gets its own table (created from the shared definition) in the run's
 * DynamoDB Local, so stream workers and queues of one file never see another file's writes.
 */
const endpoint = inject('dynamoEndpoint');
const tableName = `test-${randomUUID()}`;
Object.assign(process.env, LOCAL_AWS_ENV, { DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: tableName, CURSOR_SECRET: 'test-cursor-secret', POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'CRITICAL' });
// The suite sends many requests quickly from one account: rate limiting is off unless a test
// turns it on (test/integration/rate-limit.test.ts).
process.env.CRM_RATE_LIMIT = '0';
// Local servers a test starts (`npm start`) write their state file here, not in the project (local/state-file.ts).
process.env.CRM_STATE_FILE = join(tmpdir(), `crm-state-${tableName}.json`);

beforeAll(async () => {
  await ensureTable(endpoint, tableName);
});

// The file's table goes when the file ends (its own afterAll hooks, which stop its workers, run
// first). DynamoDB Local answers every stream call by scanning the stream records of all the
// tables it holds: left in place, the tables of the files before (a 2,000-contact export's, say)
// slowed every later file's stream worker several-fold.
afterAll(async () => {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
  } catch {
    // gone already, or DynamoDB Local stopped: nothing to clean
  } finally {
    client.destroy();
  }
});
