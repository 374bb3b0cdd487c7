/**
 * The single DynamoDB table, declared once. The CDK stack, the local runner and the tests
 * all build the table from TABLE_DEFINITION, and every key in the code base comes from the
 * key builders below (see docs/data-model.md for the access patterns).
 */
import type { EntityType } from '../schemas/entities/index.js';

export const TABLE_DEFINITION = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** GSI on account + entity type + created_at: the newest-first listing of every entity. */
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  stream: 'NEW_AND_OLD_IMAGES',
  /**
   * The entity type of a record item (`contact`, `activity`, …). Not `type`: that is an API field
   * of some entities (an activity's type).
   */
  entityTypeAttribute: 'entity',
  /** Epoch-seconds attribute that expires items (idempotency records). */
  ttlAttribute: 'ttl',
} as const;

export const DEFAULT_TABLE_NAME = 'crm';

/** Parameters for CreateTable, used by the local runner and the tests (the stack maps the same fields). */
export function createTableInput(tableName: string) {
  const d = TABLE_DEFINITION;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: d.partitionKey, AttributeType: 'S' as const },
      { AttributeName: d.sortKey, AttributeType: 'S' as const },
      { AttributeName: d.gsi1.partitionKey, AttributeType: 'S' as const },
      { AttributeName: d.gsi1.sortKey, AttributeType: 'S' as const },
    ],
    KeySchema: [
      { AttributeName: d.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: d.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: d.gsi1.name,
        KeySchema: [
          { AttributeName: d.gsi1.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: d.gsi1.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'ALL' as const },
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: d.stream },
  };
}

/** Entity types stored as records (one item each, sk = RECORD_SK): the entity list's types. */
export type { EntityType };

export const RECORD_SK = 'R';
/** Sort key of a merge item (keys.merge): its stream records are merges, not record changes. */
export const MERGE_SK = 'M';
/**
 * Attribute of a record item written by a restore (contract §15): the version the record had when
 * it was deleted. Its insert is a `restored` change, not a `created` one.
 */
export const RESTORED_ATTR = 'rst';

/** Every key of account data starts with the account: tenant isolation lives in the key. */
const acct = (accountId: string) => `A#${accountId}`;

/** Sort value shared by the GSI and every index entry: newest-first order is its reverse. */
export const orderKey = (createdAt: string, id: string) => `${createdAt}#${id}`;

/**
 * Names of index partitions (the `name` of `keys.indexEntry`): one partition per indexed value,
 * holding one small entry per record, sorted like the GSI.
 */
export const indexName = {
  tag: (tag: string) => `t#${tag}`,
  /** Records that reference `id` of `target` (a contact's company, a project's contacts, …). */
  ref: (target: EntityType, id: string) => `${REF_PREFIX[target]}#${id}`,
  /** Exact (normalized) email address of a contact. */
  email: (email: string) => `e#${email}`,
  /** Exact (normalized) domain of a company. */
  domain: (domain: string) => `d#${domain}`,
  /** A search prefix. */
  word: (prefix: string) => `w#${prefix}`,
  isWord: (name: string) => name.startsWith('w#'),
  /** An enumerated field's value (a project's status, an activity's type, …). */
  value: (field: string, value: string) => `v#${field}#${value}`,
} as const;

const REF_PREFIX: Record<EntityType, string> = { company: 'c', source: 's', contact: 'k', project: 'p', activity: 'a' };

/** Attribute names of the per-account META item (see shared/db/meta.ts). */
export const metaAttr = {
  /** A pending rename (`name`) or deletion (`name: null`) of a referenced record. */
  override: (type: EntityType, id: string) => `o#${type}#${id}`,
  isOverride: (attr: string) => attr.startsWith('o#'),
  /** Ids of deleted custom-field definitions. */
  deletedFields: 'df',
  /** Number of custom-field definitions of an entity type. */
  definitionCount: (entityType: string) => `cf_count_${entityType}`,
} as const;

/** Sort key of a change-log entry: its position, zero-padded so the sort key orders numerically (change log block of `keys`). */
export const eventSk = (seq: number) => String(seq).padStart(15, '0');

/** Sort key of an import's row error (imports block of `keys`). */
const importErrorSk = (rowNumber: number) => `E#${String(rowNumber).padStart(9, '0')}`;

export const keys = {
  record: (accountId: string, type: EntityType, id: string) => ({
    pk: `${acct(accountId)}#${type}#${id}`,
    sk: RECORD_SK,
  }),
  /** GSI1 attributes of a record: the account's list of that type, newest first. */
  recordGsi: (accountId: string, type: EntityType, createdAt: string, id: string) => ({
    gsi1pk: `${acct(accountId)}#${type}`,
    gsi1sk: orderKey(createdAt, id),
  }),
  listPartition: (accountId: string, type: EntityType) => `${acct(accountId)}#${type}`,
  /**
   * An index entry: one small item per (record, indexed value), in a partition per value,
   * sorted like the GSI. `name` is `t#<tag>`, `c#<company>`, `s#<source>` or `w#<prefix>`.
   */
  indexPartition: (accountId: string, type: EntityType, name: string) => `${acct(accountId)}#${type}#x#${name}`,
  indexEntry: (accountId: string, type: EntityType, name: string, createdAt: string, id: string) => ({
    pk: `${acct(accountId)}#${type}#x#${name}`,
    sk: orderKey(createdAt, id),
  }),
  /**
   * The sampled size of an index partition (search prefixes): one counter item per partition,
   * beside it (see shared/db/search.ts).
   */
  partitionCount: (accountId: string, type: EntityType, name: string) => ({ pk: `${acct(accountId)}#${type}#n#${name}`, sk: 'N' }),
  /** Per-account metadata: pending renames/deletions of companies and sources, deleted custom fields. */
  accountMeta: (accountId: string) => ({ pk: acct(accountId), sk: 'META' }),
  customField: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#cf`, sk: id }),
  customFieldPartition: (accountId: string) => `${acct(accountId)}#cf`,
  /** Idempotency records of `*-create` calls, scoped to account and operation. */
  idempotency: (accountId: string, operation: string, key: string) => ({ pk: `IDEMP#${accountId}#${operation}#${key}`, sk: 'IDEMP' }),
  /** Access tokens, by SHA-256 hash only. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** Installation-wide secrets (the cursor signing key). */
  system: (name: string) => ({ pk: 'SYSTEM', sk: name }),
  /** Webhook endpoints: one partition per account, read once per stream batch per account. */
  webhookEndpoint: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#wh`, sk: id }),
  webhookEndpointPartition: (accountId: string) => `${acct(accountId)}#wh`,
  /**
   * Webhook deliveries: one partition per endpoint, sorted by (created_at, id) so a reverse
   * query lists them newest first. Both parts are derived from the stream event, so a replayed
   * batch addresses the same item.
   */
  webhookDelivery: (accountId: string, endpointId: string, createdAt: string, id: string) => ({
    pk: `${acct(accountId)}#wh#${endpointId}`,
    sk: orderKey(createdAt, id),
  }),
  webhookDeliveryPartition: (accountId: string, endpointId: string) => `${acct(accountId)}#wh#${endpointId}`,
  /**
   * How many endpoints an account has (at most 20): one counter item, changed in the same
   * transaction as the endpoint it counts.
   */
  webhookEndpointCount: (accountId: string) => ({ pk: `${acct(accountId)}#whn`, sk: 'N' }),
  /**
   * The sweeper's index of pending deliveries by due time (sparse GSI1 attributes, present only
   * while a delivery is pending): one partition per hour of due time and shard, sorted by due time.
   */
  webhookDue: (hourBucket: string, shard: number, dueAt: string, id: string) => ({
    gsi1pk: `WHDUE#${hourBucket}#${shard}`,
    gsi1sk: `${dueAt}#${id}`,
  }),
  webhookDuePartition: (hourBucket: string, shard: number) => `WHDUE#${hourBucket}#${shard}`,
  // ---- inbound emails (shared/db/inbound-emails.ts) ------------------------------------------
  /** The account's inbound address key (created once, stable). */
  inboundAddress: (accountId: string) => ({ pk: `${acct(accountId)}#ia`, sk: 'ADDR' }),
  /** Reverse item: which account an inbound address key belongs to (the SMTP/SES recipient check). */
  inboundAddressOwner: (addressKey: string) => ({ pk: `INBOUND#${addressKey}`, sk: 'OWNER' }),
  /** An inbound email: its record (`sk` IE) and the chunks of a long text (`sk` T#nnn) share one partition. */
  inboundEmailPartition: (accountId: string, id: string) => `${acct(accountId)}#ie#${id}`,
  inboundEmail: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#ie#${id}`, sk: 'IE' }),
  inboundEmailText: (accountId: string, id: string, n: number) => ({ pk: `${acct(accountId)}#ie#${id}`, sk: `T#${String(n).padStart(3, '0')}` }),
  /** GSI1 attributes of an inbound email: the account's list, newest first. */
  inboundEmailGsi: (accountId: string, createdAt: string, id: string) => ({ gsi1pk: `${acct(accountId)}#ie`, gsi1sk: orderKey(createdAt, id) }),
  inboundEmailListPartition: (accountId: string) => `${acct(accountId)}#ie`,
  /** Index entry: an inbound email matched to a contact (the `contact_id` filter), sorted like the list. */
  inboundEmailByContactPartition: (accountId: string, contactId: string) => `${acct(accountId)}#iec#${contactId}`,
  inboundEmailByContact: (accountId: string, contactId: string, createdAt: string, id: string) => ({ pk: `${acct(accountId)}#iec#${contactId}`, sk: orderKey(createdAt, id) }),
  /** One item per (account, Message-ID hash): the same message is stored once per account. */
  inboundMessageId: (accountId: string, messageHash: string) => ({ pk: `${acct(accountId)}#iem#${messageHash}`, sk: 'M' }),
  // ---- end inbound emails ---------------------------------------------------------------------
  // --- imports (shared/db/imports.ts) ---------------------------------------------------------
  /** An import job: one partition per job, holding the job item and its row errors. */
  importJob: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#imp#${id}`, sk: 'IMP' }),
  importPartition: (accountId: string, id: string) => `${acct(accountId)}#imp#${id}`,
  /** GSI1 attributes of a job: the account's imports, newest first. */
  importGsi: (accountId: string, createdAt: string, id: string) => ({ gsi1pk: `${acct(accountId)}#imp`, gsi1sk: orderKey(createdAt, id) }),
  importListPartition: (accountId: string) => `${acct(accountId)}#imp`,
  /**
   * Jobs that were queued: one small marker each in one installation-wide partition, so a
   * restarted local mode (whose in-memory queue lost its messages) finds and re-queues them.
   * Markers of finished jobs are removed by that recovery pass.
   */
  activeImport: (accountId: string, id: string) => ({ pk: 'IMPORTS#ACTIVE', sk: `${accountId}#${id}` }),
  activeImportsPartition: 'IMPORTS#ACTIVE',
  /** A row error of a job, sorted by row number (zero-padded so the sort key orders numerically). */
  importError: (accountId: string, id: string, rowNumber: number) => ({ pk: `${acct(accountId)}#imp#${id}`, sk: importErrorSk(rowNumber) }),
  importErrorPrefix: 'E#',
  // --- end imports -----------------------------------------------------------------------------
  // --- exports (shared/db/exports.ts; contract §16) --------------------------------------------
  /** An export job: one item per job. */
  exportJob: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#exp#${id}`, sk: 'EXP' }),
  /** GSI1 attributes of an export job: the account's exports, newest first. */
  exportGsi: (accountId: string, createdAt: string, id: string) => ({ gsi1pk: `${acct(accountId)}#exp`, gsi1sk: orderKey(createdAt, id) }),
  exportListPartition: (accountId: string) => `${acct(accountId)}#exp`,
  /** Queued export jobs (as `activeImport`): a restarted local mode finds and re-queues them. */
  activeExport: (accountId: string, id: string) => ({ pk: 'EXPORTS#ACTIVE', sk: `${accountId}#${id}` }),
  activeExportsPartition: 'EXPORTS#ACTIVE',
  // --- end exports -----------------------------------------------------------------------------
  // --- api keys and rate limits (shared/db/api-keys.ts, shared/db/rate-limit.ts; contract §14) ---
  /** An API key's record (what api-keys-get shows); its token item is `token(hash)`. */
  apiKey: (accountId: string, id: string) => ({ pk: `${acct(accountId)}#key#${id}`, sk: 'KEY' }),
  /** GSI1 attributes of a key: the account's keys, newest first. */
  apiKeyGsi: (accountId: string, createdAt: string, id: string) => ({ gsi1pk: `${acct(accountId)}#key`, gsi1sk: orderKey(createdAt, id) }),
  apiKeyListPartition: (accountId: string) => `${acct(accountId)}#key`,
  /** The account's rate-limit bucket: one small item, updated once per request (GCRA). */
  rateLimit: (accountId: string) => ({ pk: `${acct(accountId)}#rl`, sk: 'RL' }),
  // --- end api keys ------------------------------------------------------------------------------
  // --- change log (shared/db/events.ts, contract §12) -------------------------------------------
  /**
   * The account's log head: the last position written and when. Moved from n to n+k in the
   * same transaction that writes entries n+1..n+k, so every position at or below it is committed.
   */
  eventHead: (accountId: string) => ({ pk: `${acct(accountId)}#evh`, sk: 'H' }),
  /** The log: one entry per event, sorted by position. */
  eventPartition: (accountId: string) => `${acct(accountId)}#ev`,
  /** The same entries in one partition per event name (the `types` filter)… */
  eventTypePartition: (accountId: string, event: string) => `${acct(accountId)}#evt#${event}`,
  /** …and one per record (`record_id`: a record's history). */
  eventRecordPartition: (accountId: string, recordId: string) => `${acct(accountId)}#evr#${recordId}`,
  eventEntry: (partition: string, seq: number) => ({ pk: partition, sk: eventSk(seq) }),
  /**
   * The first position appended in each second (sk: `YYYY-MM-DDTHH:MM:SS` of the append time):
   * where `since` starts and which entries are still retained, in one Query.
   */
  eventSecondPartition: (accountId: string) => `${acct(accountId)}#evs`,
  eventSecond: (accountId: string, second: string) => ({ pk: `${acct(accountId)}#evs`, sk: second }),
  /** One marker per logged event id (its position): a retried stream batch appends nothing twice. */
  eventMarker: (accountId: string, eventId: string) => ({ pk: `${acct(accountId)}#evid#${eventId}`, sk: 'E' }),
  /**
   * Who deleted a record (its `*.deleted` event's actor): written in the deletion's transaction
   * beside the record item, read by the stream worker; expires after a day.
   */
  recordDeletion: (accountId: string, type: EntityType, id: string) => ({ pk: `${acct(accountId)}#${type}#${id}`, sk: 'D' }),
  // --- end change log -----------------------------------------------------------------------------
  // --- trash, restore and merge (shared/db/trash.ts, contract §15) -------------------------------
  /**
   * A trashed record (sk `T`, beside where the record was): its last stored image, `deleted_at`,
   * `purge_at` and `ttl` (the table's TTL purges it). GSI1 lists the account's trash of one type,
   * most recently deleted first.
   */
  trash: (accountId: string, type: EntityType, id: string) => ({ pk: `${acct(accountId)}#${type}#${id}`, sk: 'T' }),
  trashGsi: (accountId: string, type: EntityType, deletedAt: string, id: string) => ({ gsi1pk: `${acct(accountId)}#trash#${type}`, gsi1sk: orderKey(deletedAt, id) }),
  trashPartition: (accountId: string, type: EntityType) => `${acct(accountId)}#trash#${type}`,
  /**
   * What a deletion's cascade changed on one referencing record (sk `C#<type>#<id>#<field>`, in the
   * deleted record's partition): the value the cascade wrote, so a restore re-links only where it
   * is still that value.
   */
  cascadeLog: (accountId: string, target: EntityType, targetId: string, type: EntityType, id: string, field: string) => ({
    pk: `${acct(accountId)}#${target}#${targetId}`,
    sk: `C#${type}#${id}#${field}`,
  }),
  cascadeLogPartition: (accountId: string, target: EntityType, targetId: string) => `${acct(accountId)}#${target}#${targetId}`,
  cascadeLogPrefix: 'C#',
  /**
   * A merge (sk `M`, in the secondary's partition): the primary's image after the merge and the
   * progress of the re-pointing of the secondary's links. Its stream records raise `<type>.merged`
   * (insert) and drive the re-pointing, one bounded chunk per record (shared/stream/merge.ts).
   */
  merge: (accountId: string, type: EntityType, secondaryId: string) => ({ pk: `${acct(accountId)}#${type}#${secondaryId}`, sk: MERGE_SK }),
  // --- end trash ---------------------------------------------------------------------------------
} as const;
