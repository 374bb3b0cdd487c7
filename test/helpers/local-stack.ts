/**
 * Local mode's whole stack (local/runtime.ts `startLocalStack`: every function of the topology
 * under its trigger's adapter, the API server, the queues) in this test process, on the file's
 * table in its worker's DynamoDB Local (test/helpers/global-setup.ts) instead of a Java process
 * of its own: the stack of `npm start` without its start-up cost.
 */
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/runtime.js';

export function startFileStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  return startLocalStack({ smtpPort: 0, dynamoEndpoint: process.env.DYNAMODB_ENDPOINT!, tableName: process.env.TABLE_NAME!, ...opts });
}
