/**
 * Local mode's IAM: every AWS SDK call a function makes is checked against that function's
 * policy as the stack grants it (shared/schemas/policies.ts `policyOf`: the same statements
 * lib/grants.ts turns into the role's policy), as AWS would: an explicit Allow of the action on
 * the resource (table, index, bucket-prefix, queue, key ARN), under its conditions
 * (`ForAllValues:StringEquals|StringLike` on `dynamodb:LeadingKeys`); each item of a batch or
 * transaction is checked on its own. A refused call fails with an `AccessDeniedException` shaped
 * like AWS's, so the function answers as it would deployed (the contract's 500 path).
 *
 * The function is known from the call's async context: local mode runs each handler inside
 * `runAs(spec, …)` (local/handlers.ts). Calls outside any function (test set-up, seeding, the
 * stream poller, the queue workers' own receives) are not checked. On by default in `npm start`
 * and the tests; `CRM_LOCAL_IAM=off` turns it off.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { FunctionSpec } from '../functions/topology.js';
import { bindingEnv, QUEUE_NAMES, queueBinding } from '../shared/config/bindings.js';
import { CONTROL_TABLE_DEFINITION } from '../shared/db/control.js';
import { createTableInput, TABLE_DEFINITION } from '../shared/db/table.js';
import { type PolicyStatement, policyOf, type ResourceArns } from '../shared/schemas/policies.js';
import { LOCAL_BUCKETS, LOCAL_QUEUES } from './resources.js';
import { trackCall } from './liveness.js';

const REGION = 'local';
const ACCOUNT = '000000000000';

/** One authorization request: what IAM evaluates for one call (or one item of a batch). */
export interface AuthzRequest {
  action: string;
  resource: string;
  /** `dynamodb:LeadingKeys` of the request (the partition key values it addresses). */
  leadingKeys?: string[];
}

/** The error AWS answers a call the role does not allow. */
export class AccessDeniedException extends Error {
  override readonly name = 'AccessDeniedException';
  readonly $fault = 'client';
  readonly $metadata: { httpStatusCode: number };
  constructor(fn: string, request: AuthzRequest, status: number) {
    super(`User: arn:aws:sts::${ACCOUNT}:assumed-role/${fn}/local is not authorized to perform: ${request.action} on resource: ${request.resource} because no identity-based policy allows the ${request.action} action`);
    this.$metadata = { httpStatusCode: status };
  }
}

// ---- ARNs of the local resources ---------------------------------------------------------

const tableArn = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
const queueArn = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
const bucketArn = (name: string) => `arn:aws:s3:::${name}`;
const keyArn = (id: string) => (id.startsWith('arn:') ? id : `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`);
const queueNameOf = (url: string) => url.replace(/\/+$/, '').split('/').pop() ?? url;

/** The ARNs of the local resources, from the variables the bindings set (local/resources.ts). */
export function localArns(env: NodeJS.ProcessEnv = process.env): ResourceArns {
  const table = env[bindingEnv('table')] ?? '';
  return {
    table: tableArn(table),
    tableIndexes: createTableInput(table).GlobalSecondaryIndexes.map((index) => `${tableArn(table)}/index/${index.IndexName}`),
    control: tableArn(env[bindingEnv('control')] ?? ''),
    queues: Object.fromEntries(QUEUE_NAMES.map((q) => [q, queueArn(queueNameOf(env[bindingEnv(queueBinding(q))] ?? LOCAL_QUEUES[q]))])) as ResourceArns['queues'],
    importsBucket: bucketArn(env[bindingEnv('importsBucket')] ?? env[bindingEnv('exportsBucket')] ?? LOCAL_BUCKETS.imports),
    inboundBucket: bucketArn(env[bindingEnv('inboundBucket')] ?? LOCAL_BUCKETS.inbound),
    secretsKey: keyArn(env[bindingEnv('secretsKey')] ?? 'local'),
  };
}

// ---- What a call asks for ----------------------------------------------------------------

type Input = Record<string, unknown>;

/** A key attribute's value, document (`'A#…'`) or low-level (`{ S: 'A#…' }`). */
const scalar = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as { S?: string; N?: string };
    return v.S ?? v.N;
  }
  return undefined;
};

/** The partition key attribute of a table or one of its indexes (both tables use `pk`; GSI1 `gsi1pk`, GSI2 `gsi2pk`). */
const partitionAttribute = (indexName?: string): string => {
  if (!indexName) return TABLE_DEFINITION.partitionKey === CONTROL_TABLE_DEFINITION.partitionKey ? TABLE_DEFINITION.partitionKey : '';
  const index = [TABLE_DEFINITION.gsi1, TABLE_DEFINITION.gsi2].find((g) => g.name === indexName);
  return index ? index.partitionKey : '';
};

const itemRequest = (action: string, table: string, key: unknown): AuthzRequest => {
  const value = scalar((key as Input | undefined)?.[partitionAttribute()]);
  return { action, resource: tableArn(table), leadingKeys: value === undefined ? [] : [value] };
};

/** The partition key value a Query addresses (`pk = :p`, `#k = :p` in its KeyConditionExpression). */
function queryLeadingKeys(input: Input): string[] {
  const attribute = partitionAttribute(input.IndexName as string | undefined);
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const m of String(input.KeyConditionExpression ?? '').matchAll(/(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (name === attribute) {
      const value = scalar(values[m[2]!]);
      return value === undefined ? [] : [value];
    }
  }
  return [];
}

const TRANSACT_ACTIONS: Record<string, string> = { Put: 'dynamodb:PutItem', Update: 'dynamodb:UpdateItem', Delete: 'dynamodb:DeleteItem', ConditionCheck: 'dynamodb:ConditionCheckItem', Get: 'dynamodb:GetItem' };

function dynamoRequests(command: string, input: Input): AuthzRequest[] {
  const table = String(input.TableName ?? '');
  switch (command) {
    case 'Get':
    case 'GetItem':
      return [itemRequest('dynamodb:GetItem', table, input.Key)];
    case 'Put':
    case 'PutItem':
      return [itemRequest('dynamodb:PutItem', table, input.Item)];
    case 'Update':
    case 'UpdateItem':
      return [itemRequest('dynamodb:UpdateItem', table, input.Key)];
    case 'Delete':
    case 'DeleteItem':
      return [itemRequest('dynamodb:DeleteItem', table, input.Key)];
    case 'Query':
    case 'Scan': {
      const resource = input.IndexName ? `${tableArn(table)}/index/${String(input.IndexName)}` : tableArn(table);
      return [{ action: `dynamodb:${command}`, resource, leadingKeys: command === 'Query' ? queryLeadingKeys(input) : [] }];
    }
    case 'BatchGet':
    case 'BatchGetItem':
      return Object.entries((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap(([t, r]) => (r.Keys ?? []).map((k) => itemRequest('dynamodb:BatchGetItem', t, k)));
    case 'BatchWrite':
    case 'BatchWriteItem':
      return Object.entries((input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]>).flatMap(([t, rs]) =>
        rs.map((r) => itemRequest('dynamodb:BatchWriteItem', t, r.PutRequest?.Item ?? r.DeleteRequest?.Key)),
      );
    case 'TransactGet':
    case 'TransactGetItems':
    case 'TransactWrite':
    case 'TransactWriteItems':
      return ((input.TransactItems ?? []) as Record<string, Input>[]).flatMap((entry) =>
        Object.entries(entry).map(([kind, op]) => itemRequest(TRANSACT_ACTIONS[kind] ?? `dynamodb:${kind}`, String(op.TableName ?? ''), kind === 'Put' ? op.Item : op.Key)),
      );
    default:
      return [{ action: `dynamodb:${command}`, resource: tableArn(table) }];
  }
}

const S3_ACTIONS: Record<string, string> = {
  PutObject: 's3:PutObject',
  CreateMultipartUpload: 's3:PutObject',
  UploadPart: 's3:PutObject',
  CompleteMultipartUpload: 's3:PutObject',
  GetObject: 's3:GetObject',
  HeadObject: 's3:GetObject',
  AbortMultipartUpload: 's3:AbortMultipartUpload',
  DeleteObject: 's3:DeleteObject',
  ListParts: 's3:ListMultipartUploadParts',
};

function s3Requests(command: string, input: Input): AuthzRequest[] {
  const bucket = String(input.Bucket ?? '');
  if (command === 'ListObjectsV2' || command === 'ListObjects') return [{ action: 's3:ListBucket', resource: bucketArn(bucket) }];
  const action = S3_ACTIONS[command] ?? `s3:${command}`;
  return [{ action, resource: input.Key === undefined ? bucketArn(bucket) : `${bucketArn(bucket)}/${String(input.Key)}` }];
}

/** The requests one SDK call makes, by the client's service and the command. */
export function requestsOf(serviceId: string, commandName: string, input: Input): AuthzRequest[] {
  const command = commandName.replace(/Command$/, '');
  switch (serviceId) {
    case 'DynamoDB':
      return dynamoRequests(command, input);
    case 'S3':
      return s3Requests(command, input);
    case 'SQS':
      return [{ action: command === 'SendMessageBatch' ? 'sqs:SendMessage' : `sqs:${command}`, resource: queueArn(queueNameOf(String(input.QueueUrl ?? ''))) }];
    case 'KMS':
      return [{ action: `kms:${command}`, resource: keyArn(String(input.KeyId ?? process.env[bindingEnv('secretsKey')] ?? 'local')) }];
    default:
      return [{ action: `${serviceId.toLowerCase().replace(/\s+/g, '')}:${command}`, resource: '*' }];
  }
}

// ---- Evaluation --------------------------------------------------------------------------

/** IAM's wildcard match: `*` any run of characters, `?` one; actions ignore case. */
const glob = (pattern: string, value: string, ignoreCase = false): boolean => {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
};

const CONDITIONS: Record<string, (wanted: readonly string[], values: readonly string[]) => boolean> = {
  // ForAllValues: every value of the request matches one of the condition's (true for none).
  'ForAllValues:StringEquals': (wanted, values) => values.every((v) => wanted.includes(v)),
  'ForAllValues:StringLike': (wanted, values) => values.every((v) => wanted.some((w) => glob(w, v))),
};

const CONTEXT_KEYS: Record<string, (r: AuthzRequest) => readonly string[]> = { 'dynamodb:LeadingKeys': (r) => r.leadingKeys ?? [] };

/** Whether one statement allows the request (an unknown condition operator or key never allows). */
function allows(statement: PolicyStatement, request: AuthzRequest): boolean {
  if (!statement.actions.some((a) => glob(a, request.action, true))) return false;
  if (!statement.resources.some((r) => glob(r, request.resource))) return false;
  for (const [operator, block] of Object.entries(statement.conditions ?? {})) {
    const test = CONDITIONS[operator];
    if (!test) return false;
    for (const [key, wanted] of Object.entries(block)) {
      const context = CONTEXT_KEYS[key];
      if (!context || !test(wanted, context(request))) return false;
    }
  }
  return true;
}

/** Explicit Allow needed (no Deny statements are granted): the first request no statement allows, or undefined. */
export function refused(statements: readonly PolicyStatement[], requests: readonly AuthzRequest[]): AuthzRequest | undefined {
  return requests.find((request) => !statements.some((s) => allows(s, request)));
}

// ---- The function a call runs in ---------------------------------------------------------

type Transform = (statements: PolicyStatement[]) => PolicyStatement[];

interface Running {
  spec: Pick<FunctionSpec, 'name' | 'bindings' | 'items'>;
}

const running = new AsyncLocalStorage<Running>();
const overrides = new Map<string, Transform>();
let cache: { key: string; policies: Map<string, PolicyStatement[]> } | undefined;

/** The function's policy in this process's environment (its local resources' ARNs). */
export function localPolicyOf(spec: Running['spec']): PolicyStatement[] {
  const arns = localArns();
  const key = JSON.stringify(arns);
  if (cache?.key !== key) cache = { key, policies: new Map() };
  let policy = cache.policies.get(spec.name);
  if (!policy) {
    policy = policyOf(spec, arns);
    cache.policies.set(spec.name, policy);
  }
  const transform = overrides.get(spec.name);
  return transform ? transform(policy.map((s) => ({ ...s }))) : policy;
}

/** Tests: changes a function's policy (e.g. removes one grant) until `resetPolicy(name)`. */
export function overridePolicy(name: string, transform: Transform): void {
  overrides.set(name, transform);
}

export function resetPolicy(name: string): void {
  overrides.delete(name);
}

/** Runs `fn` as the function `spec`: its SDK calls are checked against its policy. */
export function runAs<T>(spec: Running['spec'], fn: () => T): T {
  installIamEnforcement();
  return running.run({ spec }, fn);
}

/** A handler that always runs as its function (for handlers a test imports directly). */
export function asFunction<A extends unknown[], R>(spec: Running['spec'], handler: (...args: A) => R): (...args: A) => R {
  return (...args) => runAs(spec, () => handler(...args));
}

export const enforcementEnabled = (): boolean => process.env.CRM_LOCAL_IAM !== 'off';

const PATCHED = Symbol.for('crm.local-iam');

/** Each distinct refusal once on stderr: a function refused a call is a grant to fix (or a bug the deployment would have). */
const reported = new Set<string>();
function reportOnce(fn: string, request: AuthzRequest, error: Error): void {
  const key = `${fn} ${request.action} ${request.resource} ${(request.leadingKeys ?? []).join(',')}`;
  if (reported.has(key) || reported.size > 1000) return;
  reported.add(key);
  console.warn(`local IAM: ${error.message}${request.leadingKeys?.length ? ` (dynamodb:LeadingKeys ${request.leadingKeys.join(', ')})` : ''}`);
}

/**
 * Installs the check on every AWS SDK client of this process (the SDK's one Client class, under
 * DynamoDB, S3, SQS and KMS alike). Idempotent; does nothing with `CRM_LOCAL_IAM=off`.
 */
export function installIamEnforcement(): void {
  if (!enforcementEnabled()) return;
  const proto = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...args: unknown[]) => unknown; [PATCHED]?: true };
  if (proto[PATCHED]) return;
  const original = proto.send;
  proto.send = function send(this: { config: { serviceId?: string } }, ...args: unknown[]) {
    const current = running.getStore();
    if (current) {
      const command = args[0] as { input?: Input; constructor: { name: string } };
      const serviceId = this.config?.serviceId ?? 'unknown';
      const denied = refused(localPolicyOf(current.spec), requestsOf(serviceId, command.constructor.name, command.input ?? {}));
      if (denied) {
        const error = new AccessDeniedException(current.spec.name, denied, serviceId === 'DynamoDB' ? 400 : 403);
        reportOnce(current.spec.name, denied, error);
        return Promise.reject(error);
      }
      return trackCall(current.spec.name, `${serviceId}.${command.constructor.name.replace(/Command$/, '')}`, original.apply(this, args) as Promise<unknown>);
    }
    return original.apply(this, args);
  };
  proto[PATCHED] = true;
}
