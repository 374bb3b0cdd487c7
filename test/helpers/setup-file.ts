import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, inject } from 'vitest';
import { ensureTable, LOCAL_AWS_ENV } from '../../local/dynamo.js';
import { controlTableNameFor } from '../../shared/db/control.js';

/**
 * Each test file gets its own table (created from the shared definition) in the run's
 * DynamoDB Local, so stream workers and queues of one file never see another file's writes.
 */
const endpoint = inject('dynamoEndpoint');
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

