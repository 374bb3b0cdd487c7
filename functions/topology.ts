/**
 * The topology: every function of the service, with its trigger and its typed bindings. The CDK
 * app (lib/) and local mode (local/) are two loops over this one list, with one adapter per
 * trigger kind and one grant (or local resource) per binding (shared/config/bindings.ts).
 *
 * API operations come from the registry (functions/operations.ts): trigger `http`, table access
 * from `access`, other bindings from the entry. The functions below are the rest.
 */
import type { Bindings } from '../shared/config/bindings.js';
import type { Family } from '../shared/errors.js';
import { type OperationEntry, operations } from './operations.js';

/** What runs a function. */
export type Trigger =
  /** `POST /api/<operation>` behind the authorizer. */
  | { kind: 'http'; operation: string; family: Family }
  /** The HTTP API's Lambda authorizer (cached per Authorization header). */
  | { kind: 'authorizer' }
  /** The HTTP API's `$default` route (unknown operation, wrong method): no authorizer. */
  | { kind: 'http-default' }
  /** The table's stream. */
  | { kind: 'stream'; batchSize: number }
  /** An SQS queue of the service. */
  | { kind: 'queue'; queue: QueueName; batchSize: number; maxConcurrency: number }
  /** A schedule. */
  | { kind: 'schedule'; everyMinutes: number }
  /** Objects created under a prefix of a bucket (deployed: S3 → SQS → the function; locally: SMTP). */
  | { kind: 'object'; bucket: 'inbound'; prefix: string; batchSize: number; maxConcurrency: number };

export type TriggerKind = Trigger['kind'];

/** The service's queues that trigger functions. */
export type QueueName = 'delivery' | 'imports' | 'exports';

export interface FunctionSpec {
  /** Registry name for operations (`contacts-list`), else the worker's name (`stream`). */
  name: string;
  /** Handler module relative to functions/, exporting `handler`. */
  entry: string;
  trigger: Trigger;
  bindings: Bindings;
  /** Deployed time limit. */
  timeoutSeconds: number;
  memoryMb?: number;
  /** Which nested stack holds it: the operation's family, or `workers` / `edge`. */
  group: string;
}

/** API operations answer within the HTTP API's limit (30 s). */
export const API_TIMEOUT_SECONDS = 10;

/** An operation's function: read operations may also seed the cursor key (lib/bindings.ts). */
export const operationFunction = (op: OperationEntry): FunctionSpec => ({
  name: op.name,
  entry: op.entry,
  trigger: { kind: 'http', operation: op.name, family: op.family },
  // Every operation counts against its account's rate limit (shared/http/operation.ts).
  bindings: { table: op.access, rateLimit: 'read', ...op.bindings },
  timeoutSeconds: API_TIMEOUT_SECONDS,
  group: op.family,
});

/** Every function that is not an API operation. */
export const WORKERS: readonly FunctionSpec[] = [
  { name: 'authorizer', entry: 'authorizer.ts', trigger: { kind: 'authorizer' }, bindings: { table: 'read' }, timeoutSeconds: 5, group: 'edge' },
  { name: 'fallback', entry: 'fallback.ts', trigger: { kind: 'http-default' }, bindings: {}, timeoutSeconds: API_TIMEOUT_SECONDS, group: 'edge' },
  /** Search entries, fan-out of renames and deletions, webhook deliveries of every record change. */
  { name: 'stream', entry: 'stream/handler.ts', trigger: { kind: 'stream', batchSize: 100 }, bindings: { table: 'write', deliveryQueue: 'send' }, timeoutSeconds: 60, group: 'workers' },
  /** Signs and posts webhook deliveries; a failed attempt re-enqueues itself with a delay. */
  { name: 'delivery', entry: 'delivery/handler.ts', trigger: { kind: 'queue', queue: 'delivery', batchSize: 10, maxConcurrency: 10 }, bindings: { table: 'write', deliveryQueue: 'send', secretsKey: 'decrypt' }, timeoutSeconds: 30, group: 'workers' },
  /** Re-enqueues overdue pending deliveries. */
  { name: 'sweeper', entry: 'delivery/sweeper.ts', trigger: { kind: 'schedule', everyMinutes: 1 }, bindings: { table: 'write', deliveryQueue: 'send' }, timeoutSeconds: 60, group: 'workers' },
  /** Applies import jobs' rows, one job per message; a long job continues in a new message. */
  { name: 'importWorker', entry: 'imports/worker.ts', trigger: { kind: 'queue', queue: 'imports', batchSize: 1, maxConcurrency: 5 }, bindings: { table: 'write', importsQueue: 'send', importsBucket: 'read' }, timeoutSeconds: 900, memoryMb: 1024, group: 'workers' },
  // --- exports (contract §16) ---
  /** Writes an export job's CSV file to the bucket's exports/ prefix in multipart chunks, one job per message. */
  { name: 'exportWorker', entry: 'exports/worker.ts', trigger: { kind: 'queue', queue: 'exports', batchSize: 1, maxConcurrency: 5 }, bindings: { table: 'write', exportsBucket: 'write' }, timeoutSeconds: 900, memoryMb: 1024, group: 'workers' },
  // --- end exports ---
  /** Parses a received email (SES → S3 → here) and logs it on the matching contacts. */
  { name: 'inbound', entry: 'inbound/process.ts', trigger: { kind: 'object', bucket: 'inbound', prefix: 'inbound/', batchSize: 5, maxConcurrency: 5 }, bindings: { table: 'write', inboundBucket: 'read', inboundDomain: 'read' }, timeoutSeconds: 60, group: 'workers' },
];

/** The whole service: every operation of the registry, then the workers. */
export const topologyOf = (ops: readonly OperationEntry[] = operations): FunctionSpec[] => [...ops.map(operationFunction), ...WORKERS];

export const FUNCTIONS: readonly FunctionSpec[] = topologyOf();

export const functionByName = (name: string): FunctionSpec | undefined => FUNCTIONS.find((f) => f.name === name);
