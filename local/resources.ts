/**
 * Local mode's resources, one per binding kind of the topology (functions/topology.ts): the table
 * on DynamoDB Local, the queues and buckets on the in-process fauxqs (SQS and S3 on one port,
 * addressed path-style), the configuration bindings. Each binding sets the environment variable
 * the CDK app sets for it (shared/config/bindings.ts), to its local resource.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionSpec } from '../functions/topology.js';
import { type BindingName, bindingEnv, type QueueBinding, type QueueName, queueOfBinding, QUEUES } from '../shared/config/bindings.js';
import { controlTableNameFor } from '../shared/db/control.js';

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Every queue of the service (shared/config/bindings.ts) and its local name. */
export const LOCAL_QUEUES: Record<QueueName, string> = { delivery: 'crm-webhook-deliveries', changes: 'crm-changes.fifo', imports: 'crm-imports', exports: 'crm-exports', erasures: 'crm-erasures', indexBuilds: 'crm-index-builds' };

/** The buckets: import and export files (`imports/`, `exports/`) and raw inbound mail (`inbound/`). */
export const LOCAL_BUCKETS = { imports: 'crm-imports', inbound: 'crm-inbound' } as const;
export type LocalBucket = keyof typeof LOCAL_BUCKETS;

/** Where local mode's functions find their resources (plain data: it is copied into the workers thread). */
export interface LocalResources {
  /** fauxqs: the SQS and S3 endpoint. */
  awsEndpoint: string;
  dynamoEndpoint: string;
  tableName: string;
  queueUrls: Record<QueueName, string>;
  buckets: Record<LocalBucket, string>;
  /** With a data directory, triggers keep their state in it (the stream's positions). */
  dataDir?: string;
  /** The SMTP listener's port (an `object` trigger on the inbound bucket; 0: any free port). */
  smtpPort: number;
}

/**
 * A binding's local value, or undefined to leave its variable as it is: the secrets key is the
 * local key when WEBHOOK_SECRET_KEY_ID is unset (shared/db/secret-box.ts), the rate limit is
 * CRM_RATE_LIMIT or its default (shared/domain/rate-limit.ts).
 */
const LOCAL_BINDINGS: { [B in Exclude<BindingName, QueueBinding>]: (r: LocalResources) => string | undefined } = {
  table: (r) => r.tableName,
  control: (r) => controlTableNameFor(r.tableName),
  secretsKey: () => undefined,
  importsBucket: (r) => r.buckets.imports,
  // The imports bucket's `exports/` prefix, as deployed.
  exportsBucket: (r) => r.buckets.imports,
  inboundBucket: (r) => r.buckets.inbound,
  inboundDomain: () => process.env[bindingEnv('inboundDomain')] ?? 'inbound.localhost',
  rateLimit: () => undefined,
};

/** A binding's local value: a queue's URL, or LOCAL_BINDINGS. */
const localValue = (binding: BindingName, r: LocalResources): string | undefined => {
  const queue = queueOfBinding(binding);
  return queue ? r.queueUrls[queue] : LOCAL_BINDINGS[binding as Exclude<BindingName, QueueBinding>](r);
};

/** The variables of every binding the functions declare, set to the local resources. */
export function bindingEnvironment(functions: readonly FunctionSpec[], r: LocalResources): Record<string, string> {
  const env: Record<string, string> = {};
  for (const binding of new Set(functions.flatMap((f) => Object.keys(f.bindings) as BindingName[]))) {
    const value = localValue(binding, r);
    if (value !== undefined) env[bindingEnv(binding)] = value;
  }
  return env;
}

/** Creates a bucket unless it exists. */
export async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
  } finally {
    s3.destroy();
  }
}

/** Creates a queue (or finds it) and returns its URL; a FIFO queue's name ends in `.fifo`. */
export async function ensureQueue(endpoint: string, name: string, order: 'standard' | 'fifo' = 'standard'): Promise<string> {
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  try {
    const Attributes = order === 'fifo' ? { FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' } : undefined;
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes }));
    if (!QueueUrl) throw new Error(`local queue ${name}: no queue URL`);
    return QueueUrl;
  } finally {
    sqs.destroy();
  }
}

/**
 * Creates every queue and bucket on the local fauxqs and points this process at them: the SDK
 * endpoints and every binding's variable (a workers thread copies this environment when it starts).
 */
export async function createLocalResources(
  functions: readonly FunctionSpec[],
  opts: Omit<LocalResources, 'queueUrls' | 'buckets'>,
): Promise<LocalResources> {
  const queueUrls = {} as Record<QueueName, string>;
  for (const [queue, name] of Object.entries(LOCAL_QUEUES) as [QueueName, string][]) queueUrls[queue] = await ensureQueue(opts.awsEndpoint, name, QUEUES[queue]);
  for (const bucket of new Set(Object.values(LOCAL_BUCKETS))) await ensureBucket(opts.awsEndpoint, bucket);
  const resources: LocalResources = { ...opts, queueUrls, buckets: { ...LOCAL_BUCKETS } };
  Object.assign(process.env, { DYNAMODB_ENDPOINT: opts.dynamoEndpoint, AWS_ENDPOINT_URL_SQS: opts.awsEndpoint, AWS_ENDPOINT_URL_S3: opts.awsEndpoint }, bindingEnvironment(functions, resources));
  return resources;
}
