/**
 * The typed bindings a function may declare (functions/topology.ts), each with the environment
 * variable it sets. The CDK app (lib/bindings.ts) grants and sets them; local mode
 * (local/resources.ts) sets the same variables to its local resources; the code reads them through
 * `bindingEnv`. A binding's name, modes and variable are spelled here only.
 */

/**
 * The service's queues, each with its order. Each is a queue in the stack and in local mode
 * (local/resources.ts names it), and a `send` binding `<name>Queue` whose variable is its URL
 * (`<NAME>_QUEUE_URL`); the functions it triggers name it in their trigger. `fifo` queues hand
 * out a message group's messages in order and never more than one batch of a group at a time (the
 * changes queue: one group per account, so one account's backlog holds one consumer and the
 * others are served beside it). `delivery`: webhook deliveries; `changes`: record changes, routed
 * by the stream; `imports`, `exports`, `erasures`, `indexBuilds`: jobs (contract §10, §16, §18, §17).
 */
export const QUEUES = { delivery: 'standard', changes: 'fifo', imports: 'standard', exports: 'standard', erasures: 'standard', indexBuilds: 'standard' } as const satisfies Record<string, 'standard' | 'fifo'>;

export type QueueName = keyof typeof QUEUES;
export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];
/** A queue's binding: `deliveryQueue`, `importsQueue`, … */
export type QueueBinding = `${QueueName}Queue`;
export const queueBinding = <Q extends QueueName>(queue: Q): `${Q}Queue` => `${queue}Queue`;
/** The queue a binding names, when it is a queue's. */
export const queueOfBinding = (binding: string): QueueName | undefined => QUEUE_NAMES.find((q) => queueBinding(q) === binding);

type QueueBindings = { [Q in QueueName as `${Q}Queue`]: { env: string; modes: readonly ['send'] } };
const QUEUE_BINDINGS = Object.fromEntries(QUEUE_NAMES.map((q) => [queueBinding(q), { env: `${q.replace(/[A-Z]/g, '_$&').toUpperCase()}_QUEUE_URL`, modes: ['send'] as const }])) as QueueBindings;

export const BINDINGS = {
  ...QUEUE_BINDINGS,
  /** The single table (`read`: Get/Query/BatchGet; `write`: also Put/Update/Delete/BatchWrite). */
  table: { env: 'TABLE_NAME', modes: ['read', 'write'] },
  /**
   * The control table: items nothing reacts to (rate-limit buckets, key use, idempotency records;
   * search entries and the change log, derived from the records' stream), in a table without a
   * stream so they invoke nothing. Which of its items a function may touch is its `items`
   * (shared/schemas/policies.ts).
   */
  control: { env: 'CONTROL_TABLE_NAME', modes: ['write'] },
  /** The KMS key of webhook signing secrets. */
  secretsKey: { env: 'WEBHOOK_SECRET_KEY_ID', modes: ['encrypt', 'decrypt', 'encrypt-decrypt'] },
  /** The import files bucket, `imports/` prefix only (`write`: put and get; `read`: get; `erase`: get and delete). */
  importsBucket: { env: 'IMPORTS_BUCKET', modes: ['read', 'write', 'erase'] },
  /** The export files: the imports bucket's `exports/` prefix only (`write`: multipart put and abort; `read`: get, for presigned downloads; `erase`: delete). */
  exportsBucket: { env: 'EXPORTS_BUCKET', modes: ['read', 'write', 'erase'] },
  /** The raw inbound mail bucket, `inbound/` prefix only (`read`: get; `erase`: delete). */
  inboundBucket: { env: 'INBOUND_BUCKET', modes: ['read', 'erase'] },
  /** The inbound mail domain (configuration, no grant). */
  inboundDomain: { env: 'CRM_INBOUND_DOMAIN', modes: ['read'] },
  /** The per-account rate limit `rate,burst` (configuration: the stack's RateLimit parameter; contract §14). */
  rateLimit: { env: 'CRM_RATE_LIMIT', modes: ['read'] },
} as const;

export type BindingName = keyof typeof BINDINGS;
export type BindingMode<B extends BindingName> = (typeof BINDINGS)[B]['modes'][number];
/** What a function declares: `{ table: 'write', deliveryQueue: 'send' }`. */
export type Bindings = { [B in BindingName]?: BindingMode<B> };

/** The environment variable a binding sets. */
export const bindingEnv = (binding: BindingName): string => BINDINGS[binding].env;
