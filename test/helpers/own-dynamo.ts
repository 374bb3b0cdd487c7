import { afterAll, beforeAll } from 'vitest';
import { ensureTable, type LocalDynamo, startDynamo } from '../../local/dynamo.js';

/**
 * For files that write a lot (thousands of records and their stream). DynamoDB Local answers
 * every stream call by scanning the stream records of every table it holds, so such a file once
 * slowed every later file of a shared instance. Today each worker has an instance of its own
 * (test/helpers/global-setup.ts), runs one file at a time, and drops the file's table when the
 * file is done (test/helpers/setup-file.ts): a file's writes slow no other file, and the worker's
 * instance is already warm (a fresh JVM is several times slower for its first thousand requests,
 * and takes seconds to start). So the file keeps its worker's instance, unless
 * CRM_TEST_OWN_DYNAMO=1 asks for a fresh one (to compare). Call at the top of the file, before
 * any hook that talks to DynamoDB (the data layer's client reads DYNAMODB_ENDPOINT at its first use).
 */
export function useOwnDynamo(): void {
  if (process.env.CRM_TEST_OWN_DYNAMO !== '1') return;
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
