/**
 * The topology: every function of the service, with its trigger and its typed bindings. The CDK
 * app (lib/) and local mode (local/) are two loops over this one list, with one adapter per
 * trigger kind (lib/function-group.ts, local/triggers.ts) and one grant or local resource per
 * binding (lib/bindings.ts, local/resources.ts; variables: shared/config/bindings.ts).
 *
 * API operations come from the registry (functions/operations.ts): trigger `http`, table access
 * from `access`, other bindings from the entry. The functions below are the rest.
 */
import type { Bindings, QueueName } from '../shared/config/bindings.js';
import type { ItemKind, ItemUse } from '../shared/schemas/policies.js';
import type { Family } from '../shared/errors.js';
import { type OperationEntry, operations } from './operations.js';

export type { QueueName };

/** What runs a function. */
export type Trigger =
  /** `POST /api/<operation>` behind the authorizer. */
  | { kind: 'http'; operation: string; family: Family }
  /** The HTTP API's Lambda authorizer (cached per Authorization header). */
  | { kind: 'authorizer' }
  /** The HTTP API's `$default` route (unknown operation, wrong method): no authorizer. */
  | { kind: 'http-default' }
  /** The table's stream. */
  | { kind: 'stream'; batchSize: number; local?: LocalStreamOptions }
  /** An SQS queue of the service. */
  | { kind: 'queue'; queue: QueueName; batchSize: number; maxConcurrency: number; local?: LocalQueueOptions }
  /** A schedule. */
  | { kind: 'schedule'; everyMinutes: number; local?: LocalScheduleOptions }
  /** Objects created under a prefix of a bucket (deployed: S3 → SQS → the function; locally: SMTP). */
  | { kind: 'object'; bucket: 'inbound'; prefix: string; batchSize: number; maxConcurrency: number };

export type TriggerKind = Trigger['kind'];

/*
 * Local mode (local/triggers.ts: one adapter per trigger kind) runs each function as its trigger
 * would, in one process with no Lambda time limit. Where it must differ from the deployed trigger,
 * the trigger says so in `local` (the CDK app ignores it).
 */

/** How local mode reads the table's stream (DynamoDB Local, polled). */
export interface LocalStreamOptions {
  /** Records per GetRecords call and handler batch (default: the trigger's batchSize). */
  batchSize?: number;
}

/** How local mode's queue worker (local/queue-worker.ts) consumes the queue. */
export interface LocalQueueOptions {
  /** Messages handled at once, each on its own (default: batchSize × maxConcurrency, what Lambda holds at once). */
  concurrency?: number;
  /**
   * A string field of the message body (JSON) naming the message's group: at most 16 messages of
   * one group are handled at once, so one slow group cannot fill every slot.
   */
  groupBy?: string;
  /** Seconds a received message stays invisible; a failed message comes back after it (default 30). */
  visibilityTimeoutSeconds?: number;
  /** Keep a message invisible while its handler runs, however long (a job with no time limit; its lease takes over after a crash). */
  extendWhileHandling?: boolean;
}

/** How often local mode runs a scheduled function. */
export interface LocalScheduleOptions {
  /** Seconds between runs (default: everyMinutes). */
  everySeconds?: number;
}

export interface FunctionSpec {
  /** Registry name for operations (`contacts-list`), else the worker's name (`stream`). */
  name: string;
  /** Handler module relative to functions/, exporting `handler`. */
  entry: string;
  trigger: Trigger;
  bindings: Bindings;
  /**
   * Items that are not records it reads or writes (the rate-limit bucket, key use, idempotency
   * records …): with the bindings, its IAM policy (shared/schemas/policies.ts `policyOf`).
   */
  items?: ItemUse;
  /** Deployed time limit. */
  timeoutSeconds: number;
  memoryMb?: number;
  /** Which nested stack holds it: the operation's family, or `workers` / `edge`. */
  group: string;
}

/** API operations answer within the HTTP API's limit (30 s). */
export const API_TIMEOUT_SECONDS = 10;

/**
 * What every operation's pipeline writes on each call (shared/http/operation.ts `admit`): a token
 * of the account's rate-limit bucket and its key's `last_used_at`, both in the control table.
 */
export const PIPELINE_ITEMS: readonly ItemKind[] = ['rateLimit', 'keyUse'];

/** An operation's function: its declaration's access, bindings and items, plus its pipeline's. */
export const operationFunction = (op: OperationEntry): FunctionSpec => ({
  name: op.name,
  entry: op.entry,
  trigger: { kind: 'http', operation: op.name, family: op.family },
  // Every operation counts against its account's rate limit (shared/http/operation.ts).
  bindings: { table: op.access, control: 'write', rateLimit: 'read', ...op.bindings },
  items: {
    reads: op.items?.reads ?? [],
    // Read operations create the cursor signing key on first use (SYSTEM partition only).
    writes: [...PIPELINE_ITEMS, ...(op.access === 'read' ? (['cursorKey'] as const) : []), ...(op.idempotent ? (['idempotency'] as const) : []), ...(op.items?.writes ?? [])],
  },
  timeoutSeconds: API_TIMEOUT_SECONDS,
  group: op.family,
});

/** Every function that is not an API operation. */
export const WORKERS: readonly FunctionSpec[] = [
  { name: 'authorizer', entry: 'authorizer.ts', trigger: { kind: 'authorizer' }, bindings: { table: 'read' }, timeoutSeconds: 5, group: 'edge' },
  { name: 'fallback', entry: 'fallback.ts', trigger: { kind: 'http-default' }, bindings: {}, timeoutSeconds: API_TIMEOUT_SECONDS, group: 'edge' },
  /** Routes every record change to the changes queue, one message group per account (shared/stream/route.ts). Locally: larger batches. */
  { name: 'stream', entry: 'stream/handler.ts', trigger: { kind: 'stream', batchSize: 100, local: { batchSize: 1000 } }, bindings: { changesQueue: 'send' }, timeoutSeconds: 60, group: 'workers' },
  /**
   * One account's record changes at a time per message group: the change log, search entries,
   * fan-out of renames and deletions, webhook deliveries. Accounts in parallel, at most one batch
   * of an account at once (docs/performance.md, "Fairness").
   */
  { name: 'changes', entry: 'stream/changes.ts', trigger: { kind: 'queue', queue: 'changes', batchSize: 10, maxConcurrency: 10, local: { concurrency: 8, groupBy: 'account_id', visibilityTimeoutSeconds: 60 } }, bindings: { table: 'write', control: 'write', deliveryQueue: 'send' }, items: { reads: ['changeLog'], writes: ['changeLog', 'searchEntries', 'summaries'] }, timeoutSeconds: 120, group: 'workers' },
  /**
   * Signs and posts webhook deliveries; a failed attempt re-enqueues itself with a delay. Locally
   * each message is handled on its own, many at once, at most 16 per endpoint (docs/webhooks.md).
   */
  { name: 'delivery', entry: 'delivery/handler.ts', trigger: { kind: 'queue', queue: 'delivery', batchSize: 10, maxConcurrency: 10, local: { concurrency: 256, groupBy: 'endpoint_id' } }, bindings: { table: 'write', deliveryQueue: 'send', secretsKey: 'decrypt' }, timeoutSeconds: 30, group: 'workers' },
  /** Re-enqueues overdue pending deliveries. Locally every 5 s (the in-process queue acts within milliseconds). */
  { name: 'sweeper', entry: 'delivery/sweeper.ts', trigger: { kind: 'schedule', everyMinutes: 1, local: { everySeconds: 5 } }, bindings: { table: 'write', deliveryQueue: 'send' }, timeoutSeconds: 60, group: 'workers' },
  /**
   * Applies import jobs' rows, one job per message; a long job continues in a new message.
   * Locally a job runs to its end, its message held meanwhile; the visibility time-out is the
   * job's lease (IMPORT_LEASE_MS, test/integration/local-topology.test.ts).
   */
  { name: 'importWorker', entry: 'imports/worker.ts', trigger: { kind: 'queue', queue: 'imports', batchSize: 1, maxConcurrency: 5, local: { concurrency: 4, visibilityTimeoutSeconds: 120, extendWhileHandling: true } }, bindings: { table: 'write', importsQueue: 'send', importsBucket: 'read' }, timeoutSeconds: 900, memoryMb: 1024, group: 'workers' },
  // --- exports (contract §16) ---
  /**
   * Writes an export job's CSV file to the bucket's exports/ prefix in multipart chunks, one job
   * per message. Locally as the import worker (the lease: EXPORT_LEASE_MS).
   */
  { name: 'exportWorker', entry: 'exports/worker.ts', trigger: { kind: 'queue', queue: 'exports', batchSize: 1, maxConcurrency: 5, local: { concurrency: 2, visibilityTimeoutSeconds: 120, extendWhileHandling: true } }, bindings: { table: 'write', control: 'write', exportsBucket: 'write', exportsQueue: 'send' }, items: { reads: ['searchEntries'] }, timeoutSeconds: 900, memoryMb: 1024, group: 'workers' },
  // --- end exports ---
  /**
   * Erases a person (contract §18), one erasure per message, step by step with its position saved
   * (a crash resumes at the step it was in). Locally as the export worker (the lease: ERASURE_LEASE_MS).
   */
  { name: 'erasureWorker', entry: 'erasures/worker.ts', trigger: { kind: 'queue', queue: 'erasures', batchSize: 1, maxConcurrency: 5, local: { concurrency: 4, visibilityTimeoutSeconds: 60, extendWhileHandling: true } }, bindings: { table: 'write', control: 'write', deliveryQueue: 'send', erasuresQueue: 'send', exportsBucket: 'erase', importsBucket: 'erase', inboundBucket: 'erase' }, items: { reads: ['idempotency', 'changeLog'], writes: ['idempotency', 'changeLog'] }, timeoutSeconds: 900, group: 'workers' },
  /**
   * Applies a change of a custom field's `indexed` to the existing records (contract §17), one
   * build per message, page by page with its position saved (a crash resumes after the last
   * saved page). Locally as the export worker (the lease: INDEX_BUILD_LEASE_MS).
   */
  { name: 'indexBuildWorker', entry: 'custom-fields/index-worker.ts', trigger: { kind: 'queue', queue: 'indexBuilds', batchSize: 1, maxConcurrency: 2, local: { concurrency: 2, visibilityTimeoutSeconds: 60, extendWhileHandling: true } }, bindings: { table: 'write', indexBuildsQueue: 'send' }, timeoutSeconds: 900, group: 'workers' },
  /** Parses a received email (SES → S3 → here) and logs it on the matching contacts. */
  { name: 'inbound', entry: 'inbound/process.ts', trigger: { kind: 'object', bucket: 'inbound', prefix: 'inbound/', batchSize: 5, maxConcurrency: 5 }, bindings: { table: 'write', inboundBucket: 'read', inboundDomain: 'read' }, timeoutSeconds: 60, group: 'workers' },
];

/** The whole service: every operation of the registry, then the workers. */
export const topologyOf = (ops: readonly OperationEntry[] = operations): FunctionSpec[] => [...ops.map(operationFunction), ...WORKERS];

export const FUNCTIONS: readonly FunctionSpec[] = topologyOf();

export const functionByName = (name: string): FunctionSpec | undefined => FUNCTIONS.find((f) => f.name === name);
