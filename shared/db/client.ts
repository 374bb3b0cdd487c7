import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv, requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { CALL_TIME_LIMITS } from '../config/call-limits.js';
import { keys } from './table.js';

let cached: DynamoDBDocumentClient | undefined;
let base: DynamoDBClient | undefined;
const configurers: ((client: DynamoDBClient) => void)[] = [];

/**
 * Runs `configure` on the low-level client behind db(): now if it is built, else when it is. How a
 * host adds middleware to the client the functions use (local mode's fair gate, local/fair-gate.ts)
 * without building the client itself or knowing when the environment that configures it is set.
 */
/**
 * Set by the capacity tracker while it is installed (capacity.ts): told the stored item images a
 * transaction's update or delete replaces, so that its billed write units can be estimated as AWS
 * computes them (the request does not carry them). Unset in the functions.
 */
export const billing: { note?: (op: object, ...images: object[]) => void } = {};

export function configureDbClient(configure: (client: DynamoDBClient) => void): void {
  if (base) configure(base);
  else configurers.push(configure);
}

/** The low-level client behind db() (for libraries that take a DynamoDBClient). */
export function dbClient(): DynamoDBClient {
  db();
  return base!;
}

/**
 * The shared document client. `DYNAMODB_ENDPOINT` points it at DynamoDB Local. Tests and the
 * benchmark measure what an operation really reads and writes by adding the capacity tracker's
 * middleware (capacity.ts `measureCapacity`, through `configureDbClient`): the functions'
 * bundles do not carry it.
 */
export function db(): DynamoDBDocumentClient {
  if (cached) return cached;
  const endpoint = optionalEnv('DYNAMODB_ENDPOINT');
  base = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 4,
    requestHandler: CALL_TIME_LIMITS,
  });
  if (endpoint) addLocalDurabilityBarrier(base, endpoint);
  for (const configure of configurers.splice(0)) configure(base);
  cached = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  return cached;
}

/**
 * DynamoDB Local answers a TransactWriteItems before its SQLite COMMIT has run: the commit is a
 * job queued behind the answer (SQLiteDBAccess.commitTransaction does not wait for it), so a
 * kill -9 of the Java process right after the answer loses an acknowledged write (contract §7;
 * test/integration/crash-drill.test.ts). Its jobs run one at a time in order, so a read queued
 * after the answer returns only once that commit is on disk. In local mode every transaction is
 * followed by such a read (a GetItem of a key that never exists, on a client of its own so the
 * capacity tracker does not count it) before the caller sees the answer. Deployed, DynamoDB
 * answers only durable writes and nothing is added.
 */
function addLocalDurabilityBarrier(client: DynamoDBClient, endpoint: string): void {
  let barrier: DynamoDBClient | undefined;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (/^(TransactWrite|ExecuteTransaction)/.test(context.commandName ?? '')) {
        barrier ??= new DynamoDBClient({ endpoint, maxAttempts: 4, requestHandler: CALL_TIME_LIMITS });
        const { pk, sk } = keys.system('local-durability-barrier');
        await barrier.send(new GetItemCommand({ TableName: tableName(), Key: { pk: { S: pk }, sk: { S: sk } } }));
      }
      return out;
    },
    { step: 'initialize', name: 'localDurabilityBarrier' },
  );
}

export function tableName(): string {
  return requireEnv(bindingEnv('table'));
}
