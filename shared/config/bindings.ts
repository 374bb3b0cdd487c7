/**
 * The typed bindings a function may declare (functions/topology.ts), each with the environment
 * variable it sets. The CDK app (lib/bindings.ts) grants and sets them; local mode
 * (local/resources.ts) sets the same variables to its local resources; the code reads them through
 * `bindingEnv`. A binding's name, modes and variable are spelled here only.
 */
export const BINDINGS = {
  /** The single table (`read`: Get/Query/BatchGet; `write`: also Put/Update/Delete/BatchWrite). */
  table: { env: 'TABLE_NAME', modes: ['read', 'write'] },
  /**
   * The control table: items nothing reacts to (rate-limit buckets, key use, idempotency records;
   * search entries and the change log, derived from the records' stream), in a table without a
   * stream so they invoke nothing. Which of its items a function may touch is its `items`
   * (shared/schemas/policies.ts).
   */
  control: { env: 'CONTROL_TABLE_NAME', modes: ['write'] },
  /** The webhook delivery queue (send only; the delivery worker consumes it through its trigger). */
  deliveryQueue: { env: 'DELIVERY_QUEUE_URL', modes: ['send'] },
  /** The record-change queue (FIFO, one message group per account: the stream routes to it, the changes worker consumes it). */
  changesQueue: { env: 'CHANGES_QUEUE_URL', modes: ['send'] },
  /** The KMS key of webhook signing secrets. */
  secretsKey: { env: 'WEBHOOK_SECRET_KEY_ID', modes: ['encrypt', 'decrypt', 'encrypt-decrypt'] },
  /** The import files bucket, `imports/` prefix only (`write`: put and get; `read`: get; `erase`: get and delete). */
  importsBucket: { env: 'IMPORTS_BUCKET', modes: ['read', 'write', 'erase'] },
  /** The import job queue. */
  importsQueue: { env: 'IMPORTS_QUEUE_URL', modes: ['send'] },
  // --- exports (contract §16) ---
  /** The export files: the imports bucket's `exports/` prefix only (`write`: multipart put and abort; `read`: get, for presigned downloads; `erase`: delete). */
  exportsBucket: { env: 'EXPORTS_BUCKET', modes: ['read', 'write', 'erase'] },
  /** The export job queue. */
  exportsQueue: { env: 'EXPORTS_QUEUE_URL', modes: ['send'] },
  // --- end exports ---
  /** The erasure job queue (contract §18). */
  erasuresQueue: { env: 'ERASURES_QUEUE_URL', modes: ['send'] },
  /** The index-build queue (contract §17: a custom field's `indexed` changed). */
  indexBuildsQueue: { env: 'INDEX_BUILDS_QUEUE_URL', modes: ['send'] },
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
