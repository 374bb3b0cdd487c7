/**
 * A function's IAM policy as data, derived from what it declares: its bindings (the table's
 * access mode, queues, buckets, the secrets key: shared/config/bindings.ts) and the kinds of
 * items beyond records it reads or writes (`items`: the rate-limit bucket, key use, idempotency
 * records, items created on first use). The CDK app turns the statements into the role's policy
 * (lib/bindings.ts) and local mode checks every AWS SDK call of the function against the same
 * statements (local/iam.ts), so both come from one source. Pure: no AWS library.
 */
import { type BindingMode, type BindingName, type Bindings, type QueueBinding, type QueueName, queueBinding, queueOfBinding } from '../config/bindings.js';
import { ACCOUNT_KEYS } from './keys/account.js';
import { API_KEY_KEYS } from './keys/api-keys.js';
import { EVENT_KEYS } from './keys/events.js';
import { INBOUND_EMAIL_KEYS } from './keys/inbound-emails.js';
import { RECORD_INDEX_NAMES, RECORD_KEYS } from './keys/records.js';
import { SUMMARY_KEYS } from './keys/summaries.js';

/** A search prefix's partition (`A#{account}#{type}#x#w#{prefix}`) and its sampled counter's. */
const SEARCH_PARTITIONS = [RECORD_KEYS.indexPartition, RECORD_KEYS.partitionCount[0]].map((t) => t.replace('{name}', RECORD_INDEX_NAMES.word));

/** One statement: an explicit Allow of `actions` on `resources` (ARN patterns), under `conditions`. */
export interface PolicyStatement {
  sid: string;
  actions: readonly string[];
  resources: readonly string[];
  /** IAM condition block: `{ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['A#*#rl'] } }`. */
  conditions?: Record<string, Record<string, readonly string[]>>;
}

/**
 * Table actions of the data layer by access mode. TransactGetItems/TransactWriteItems have no IAM
 * action of their own: they are authorized as the Get/Put/Update/Delete/ConditionCheck they
 * contain. No Scan, no DescribeTable, no `dynamodb:*`.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;

/** Object prefixes of the buckets (the code's object keys start with them). */
export const IMPORT_FILES_PREFIX = 'imports/';
export const INBOUND_PREFIX = 'inbound/';
export const EXPORT_FILES_PREFIX = 'exports/';

/**
 * Kinds of items that are not a family's records, each with the table that holds it, the
 * partitions it lives in (key templates: a placeholder becomes `*` in the `dynamodb:LeadingKeys`
 * condition) and the actions its store uses to read and to write it.
 */
export const ITEM_KINDS = {
  /** The account's rate-limit bucket (shared/db/rate-limit.ts): taken by every API call. */
  rateLimit: { table: 'control', partitions: [API_KEY_KEYS.rateLimit[0]], read: ['dynamodb:GetItem'], write: ['dynamodb:UpdateItem'] },
  /** An API key's `last_used_at` (shared/db/api-keys.ts): written by every API call of a key, read by key management. */
  keyUse: { table: 'control', partitions: [API_KEY_KEYS.apiKey[0]], read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'], write: ['dynamodb:UpdateItem'] },
  /** Idempotency records of `*-create` calls (shared/db/idempotency-store.ts, Powertools: conditional put, get on conflict, update, delete on failure). */
  idempotency: { table: 'control', partitions: [ACCOUNT_KEYS.idempotency[0]], read: ['dynamodb:GetItem'], write: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
  /**
   * Search entries and their sampled partition counters (shared/db/search.ts): derived from records
   * by the changes worker, read by the lists that search (a family's list, an export's pages).
   */
  searchEntries: { table: 'control', partitions: SEARCH_PARTITIONS, read: ['dynamodb:Query', 'dynamodb:BatchGetItem'], write: ['dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'] },
  /**
   * The change log (shared/db/events.ts): its head, entries (the log, per event name, per record),
   * per-second markers and event-id markers. Appended by the changes worker, read by `events-list`
   * and webhook replays, its bodies rewritten by an erasure.
   */
  changeLog: {
    table: 'control',
    partitions: [EVENT_KEYS.eventHead[0], EVENT_KEYS.eventPartition, EVENT_KEYS.eventTypePartition, EVENT_KEYS.eventRecordPartition, EVENT_KEYS.eventSecondPartition, EVENT_KEYS.eventMarker[0]],
    read: ['dynamodb:GetItem', 'dynamodb:Query'],
    write: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
  },
  /**
   * The project summary counters and their per-change markers (shared/db/summaries.ts): applied by
   * the changes worker in transactions (an Update per counter, a conditional Put per marker), read
   * by `projects-summary` and `pipelines-board` (one Query of a dimension's partition).
   */
  summaries: { table: 'control', partitions: [SUMMARY_KEYS.summaryPartition, SUMMARY_KEYS.summaryMarker[0]], read: ['dynamodb:Query'], write: ['dynamodb:UpdateItem', 'dynamodb:PutItem'] },
  /** The installation's cursor signing key (shared/db/cursor.ts), created by the first list request. */
  cursorKey: { table: 'table', partitions: [ACCOUNT_KEYS.system[0]], read: [], write: ['dynamodb:PutItem'] },
  /** The account's inbound address and its owner item, created by the first `inbound-emails-address`. */
  inboundAddress: { table: 'table', partitions: [INBOUND_EMAIL_KEYS.inboundAddress[0], INBOUND_EMAIL_KEYS.inboundAddressOwner[0]], read: [], write: ['dynamodb:PutItem'] },
} as const satisfies Record<string, { table: 'table' | 'control'; partitions: readonly string[]; read: readonly string[]; write: readonly string[] }>;

export type ItemKind = keyof typeof ITEM_KINDS;

/** The items beyond records a function reads and writes. */
export interface ItemUse {
  reads?: readonly ItemKind[];
  writes?: readonly ItemKind[];
}

/** What the policy is derived from: a function's bindings and items (functions/topology.ts `FunctionSpec`). */
export interface PolicySubject {
  bindings: Bindings;
  items?: ItemUse;
}

/** The ARNs of the service's resources (CDK tokens when synthesized, local names in local mode). */
export interface ResourceArns {
  table: string;
  /** Every index of the table (`<table>/index/<name>`). */
  tableIndexes: readonly string[];
  control: string;
  /** Every queue (shared/config/bindings.ts `QUEUES`). */
  queues: Record<QueueName, string>;
  /** The imports bucket (import files under `imports/`, export files under `exports/`). */
  importsBucket: string;
  inboundBucket: string;
  secretsKey: string;
}

/** The `dynamodb:LeadingKeys` pattern of a partition template (`A#{account}#rl` → `A#*#rl`). */
export const leadingKeyPattern = (template: string): string => template.replace(/\{[^}]*\}/g, '*');

/** A partition template as a pattern: the account and the type are one key part each, any other placeholder any text. */
const templatePattern = (template: string): RegExp =>
  new RegExp(`^${template.split(/(\{[^}]*\})/).map((part) => (/^\{(account|type)\}$/.test(part) ? '[^#]+' : part.startsWith('{') ? '.*' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('')}$`);

/**
 * Whether a partition key value is one of an item kind's partitions. Stricter than the grant's
 * `dynamodb:LeadingKeys` wildcard (`*` spans `#`): a tag's partition is never a search prefix's.
 */
export const inPartitionsOf = (kind: ItemKind, pk: string): boolean => ITEM_KINDS[kind].partitions.some((t) => templatePattern(t).test(pk));

const leadingKeys = (kind: ItemKind): PolicyStatement['conditions'] => {
  const patterns = ITEM_KINDS[kind].partitions.map(leadingKeyPattern);
  const operator = patterns.some((p) => p.includes('*')) ? 'ForAllValues:StringLike' : 'ForAllValues:StringEquals';
  return { [operator]: { 'dynamodb:LeadingKeys': patterns } };
};

const sidOf = (...parts: string[]) => parts.map((p) => p.replace(/[^A-Za-z0-9]/g, '')).map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');

/** The statements of each kind of item a function reads or writes (each pinned to its partitions). */
function itemStatements(subject: PolicySubject, arns: ResourceArns): PolicyStatement[] {
  const tableWrite = subject.bindings.table === 'write';
  const out: PolicyStatement[] = [];
  const kinds = new Set<ItemKind>([...(subject.items?.reads ?? []), ...(subject.items?.writes ?? [])]);
  for (const kind of kinds) {
    const decl = ITEM_KINDS[kind];
    const writes = subject.items?.writes?.includes(kind) ?? false;
    const reads = subject.items?.reads?.includes(kind) ?? false;
    if (decl.table === 'table' && tableWrite) continue; // covered by the table's write grant
    if (decl.table === 'control' && subject.bindings.control === undefined) throw new Error(`items: ${kind} lives in the control table, which the function does not bind`);
    if (decl.table === 'table' && subject.bindings.table === undefined) throw new Error(`items: ${kind} lives in the table, which the function does not bind`);
    const actions = [...new Set<string>([...(reads ? decl.read : []), ...(writes ? decl.write : [])])];
    if (actions.length === 0) continue;
    out.push({ sid: sidOf(kind, writes ? 'write' : 'read'), actions, resources: [decl.table === 'control' ? arns.control : arns.table], conditions: leadingKeys(kind) });
  }
  return out;
}

type BindingPolicy<B extends BindingName> = (mode: BindingMode<B>, arns: ResourceArns) => PolicyStatement[];

const prefix = (bucketArn: string, p: string) => `${bucketArn}/${p}*`;

/** A queue's binding: send to that queue (its consumers receive through their trigger). */
const queuePolicy = (queue: QueueName, a: ResourceArns): PolicyStatement[] => [{ sid: sidOf(queueBinding(queue), 'send'), actions: ['sqs:SendMessage'], resources: [a.queues[queue]] }];

/** One policy per binding kind but the queues': exactly the access its mode names (a new binding kind does not compile without one). */
const BINDING_POLICIES: { [B in Exclude<BindingName, QueueBinding>]: BindingPolicy<B> } = {
  table: (mode, a) => [
    { sid: 'TableRead', actions: TABLE_READ_ACTIONS, resources: [a.table, ...a.tableIndexes] },
    ...(mode === 'write' ? [{ sid: 'TableWrite', actions: TABLE_WRITE_ACTIONS, resources: [a.table] }] : []),
  ],
  // The control table's grants are per kind of item (itemStatements).
  control: () => [],
  // webhooks-create decrypts the secret of its own stored idempotent result on a retry; the delivery worker signs.
  secretsKey: (mode, a) => [{ sid: 'SecretsKey', actions: [...(mode !== 'decrypt' ? ['kms:Encrypt'] : []), ...(mode !== 'encrypt' ? ['kms:Decrypt'] : [])], resources: [a.secretsKey] }],
  // HeadObject is authorized as GetObject.
  // `erase` (the erasure worker, contract §18): read a file to find a person's email in it, delete it.
  importsBucket: (mode, a) => [{ sid: 'ImportFiles', actions: mode === 'write' ? ['s3:PutObject', 's3:GetObject'] : mode === 'erase' ? ['s3:GetObject', 's3:DeleteObject'] : ['s3:GetObject'], resources: [prefix(a.importsBucket, IMPORT_FILES_PREFIX)] }],
  // The worker writes the file as a multipart upload (PutObject covers create, part and complete) and aborts an interrupted one;
  // the read operations presign downloads (a presigned GET is authorized as the signer's GetObject).
  // `erase` (the erasure worker, contract §18): delete an export file of contacts.
  exportsBucket: (mode, a) => [{ sid: 'ExportFiles', actions: mode === 'write' ? ['s3:PutObject', 's3:AbortMultipartUpload'] : mode === 'erase' ? ['s3:DeleteObject'] : ['s3:GetObject'], resources: [prefix(a.importsBucket, EXPORT_FILES_PREFIX)] }],
  // `erase` (the erasure worker, contract §18): delete the raw messages of the emails it deletes.
  inboundBucket: (mode, a) => [{ sid: 'InboundMail', actions: mode === 'erase' ? ['s3:DeleteObject'] : ['s3:GetObject'], resources: [prefix(a.inboundBucket, INBOUND_PREFIX)] }],
  inboundDomain: () => [],
  rateLimit: () => [],
};

/** The function's policy: its bindings' statements, then its items'. */
export function policyOf(subject: PolicySubject, arns: ResourceArns): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  for (const [name, mode] of Object.entries(subject.bindings) as [BindingName, string][]) {
    const queue = queueOfBinding(name);
    statements.push(...(queue ? queuePolicy(queue, arns) : (BINDING_POLICIES[name as Exclude<BindingName, QueueBinding>] as BindingPolicy<BindingName>)(mode as never, arns)));
  }
  return [...statements, ...itemStatements(subject, arns)].filter((s) => s.actions.length > 0);
}
