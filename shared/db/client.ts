import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { optionalEnv, requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { isMeasuring, recordCapacity } from './capacity.js';

let cached: DynamoDBDocumentClient | undefined;
let base: DynamoDBClient | undefined;

/** The low-level client behind db() (for libraries that take a DynamoDBClient). */
export function dbClient(): DynamoDBClient {
  db();
  return base!;
}

/**
 * The shared document client. `DYNAMODB_ENDPOINT` points it at DynamoDB Local; every call
 * asks for ReturnConsumedCapacity=INDEXES and reports it to the capacity tracker, so tests
 * and the benchmark can assert what an operation really read and wrote.
 */
export function db(): DynamoDBDocumentClient {
  if (cached) return cached;
  const endpoint = optionalEnv('DYNAMODB_ENDPOINT');
  base = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 4,
  });
  base.middlewareStack.add(
    (next, context) => async (args) => {
      if (!isMeasuring()) return next(args);
      const input = args.input as Record<string, unknown>;
      if (input && typeof input === 'object' && !('ReturnConsumedCapacity' in input)) {
        input.ReturnConsumedCapacity = 'INDEXES';
      }
      const out = await next(args);
      recordCapacity(context.commandName ?? '', input, out.output as unknown as Record<string, unknown>);
      return out;
    },
    { step: 'initialize', name: 'consumedCapacity' },
  );
  cached = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  return cached;
}

export function tableName(): string {
  return requireEnv(bindingEnv('table'));
}
