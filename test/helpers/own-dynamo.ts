import { afterAll, beforeAll } from 'vitest';
import { ensureTable, type LocalDynamo, startDynamo } from '../../local/dynamo.js';

/**
 * For files that write a lot (thousands of records and their stream): the file runs on a DynamoDB
 * Local of its own. DynamoDB Local answers every stream call by scanning the stream records of
 * every table it holds, and dropping a file's table does not make its worker's instance as fast as
 * a fresh one: with these files on their worker's shared instance, `merge`, `search-long-words`,
 * `upsert-races` and `exports` ran 2–6 × slower in CI (a 600-link merge passed its 120 s limit).
 * `CRM_TEST_OWN_DYNAMO=0` keeps the worker's instance instead (to compare). Call at the top of the
 * file, before any hook that talks to DynamoDB (the data layer's client reads DYNAMODB_ENDPOINT at
 * its first use).
 */
export function useOwnDynamo(): void {
  if (process.env.CRM_TEST_OWN_DYNAMO === '0') return;
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
