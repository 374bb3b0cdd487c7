import { afterAll, beforeAll } from 'vitest';
import { ensureTable, type LocalDynamo, startDynamo } from '../../local/dynamo.js';

/**
 * A DynamoDB Local of the test file's own, for files that write a lot (thousands of records and
 * their stream): DynamoDB Local answers every stream call (GetRecords, DescribeStream) by scanning
 * the stream records of every table it holds, so such a file in the run's shared instance slowed
 * every later file's stream workers several-fold. Call at the top of the file, before any hook
 * that talks to DynamoDB (the data layer's client reads DYNAMODB_ENDPOINT at its first use).
 */
export function useOwnDynamo(): void {
  let dynamo: LocalDynamo | undefined;
  beforeAll(async () => {
    dynamo = await startDynamo();
    process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
    await ensureTable(dynamo.endpoint, process.env.TABLE_NAME!);
  }, 60_000);
  afterAll(async () => {
    await dynamo?.stop();
  });
}
