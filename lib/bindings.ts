import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { type BindingMode, type BindingName, bindingEnv, QUEUE_NAMES, type QueueBinding, type QueueName, queueOfBinding } from '../shared/config/bindings.js';
import { EXPORT_FILES_PREFIX, IMPORT_FILES_PREFIX, INBOUND_PREFIX, type ResourceArns } from '../shared/schemas/policies.js';
import type { FunctionSpec } from '../functions/topology.js';
import { grantPolicy, INDEX_NAMES } from './grants.js';
import { acknowledge } from './nag.js';

/** The service's shared resources a binding may name (created once, in the parent stack). */
export interface ServiceResources {
  /** The RateLimit parameter's value. */
  rateLimit: string;
  table: dynamodb.ITable;
  /** The control table (rate-limit buckets, key use, idempotency records, search entries, the change log: no stream). */
  controlTable: dynamodb.ITable;
  /** Every queue (shared/config/bindings.ts `QUEUES`). */
  queues: Record<QueueName, sqs.IQueue>;
  secretsKey: kms.IKey;
  importsBucket: s3.IBucket;
  importsBucketArn: string;
  /** How cdk-nag names each bucket's ARN in a nested stack's policy (for the prefix grants' acknowledgements). */
  nagNames: { importsBucket: string; inboundBucket: string };
  inbound: { bucketName: string; bucketArn: string; domain: string };
}

export { EXPORT_FILES_PREFIX, IMPORT_FILES_PREFIX, INBOUND_PREFIX };

/** The ARNs the policy data names (shared/schemas/policies.ts). */
export const resourceArns = (r: ServiceResources): ResourceArns => ({
  table: r.table.tableArn,
  tableIndexes: INDEX_NAMES.map((name) => `${r.table.tableArn}/index/${name}`),
  control: r.controlTable.tableArn,
  queues: Object.fromEntries(QUEUE_NAMES.map((q) => [q, r.queues[q].queueArn])) as ResourceArns['queues'],
  importsBucket: r.importsBucketArn,
  inboundBucket: r.inbound.bucketArn,
  secretsKey: r.secretsKey.keyArn,
});

type Setting<B extends BindingName> = (fn: lambda.Function, mode: BindingMode<B>, r: ServiceResources) => void;

/** The prefix grants name one prefix of one bucket: a wildcard by design (one object per import or message). */
const prefixAck = (fn: lambda.Function, nagName: string, prefix: string, why: string) => acknowledge(fn.role!, `AwsSolutions-IAM5[Resource::${nagName}/${prefix}*]`, `${why}: no list, no delete.`);

/**
 * One setting per binding but the queues' (a queue's sets its URL): the variable it sets (and the
 * acknowledgement of a prefix grant). The grants themselves are the function's policy as data
 * (`grantPolicy`, shared/schemas/policies.ts).
 */
const SETTINGS: { [B in Exclude<BindingName, QueueBinding>]: Setting<B> } = {
  table: (fn, _mode, r) => fn.addEnvironment(bindingEnv('table'), r.table.tableName),
  control: (fn, _mode, r) => fn.addEnvironment(bindingEnv('control'), r.controlTable.tableName),
  secretsKey: (fn, _mode, r) => fn.addEnvironment(bindingEnv('secretsKey'), r.secretsKey.keyId),
  importsBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('importsBucket'), r.importsBucket.bucketName);
    prefixAck(fn, r.nagNames.importsBucket, IMPORT_FILES_PREFIX, 'Import files are one object per import under the imports/ prefix of the imports bucket');
  },
  exportsBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('exportsBucket'), r.importsBucket.bucketName);
    prefixAck(fn, r.nagNames.importsBucket, EXPORT_FILES_PREFIX, 'Export files are one object per export under the exports/ prefix of the imports bucket');
  },
  inboundBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('inboundBucket'), r.inbound.bucketName);
    prefixAck(fn, r.nagNames.inboundBucket, INBOUND_PREFIX, 'Raw inbound messages are stored by SES under inbound/ (object keys are SES message ids)');
  },
  rateLimit: (fn, _mode, r) => fn.addEnvironment(bindingEnv('rateLimit'), r.rateLimit),
  inboundDomain: (fn, _mode, r) => fn.addEnvironment(bindingEnv('inboundDomain'), r.inbound.domain),
};

/** Applies every binding a function declares. */
export function bind(fn: lambda.Function, spec: FunctionSpec, resources: ServiceResources): void {
  for (const [name, mode] of Object.entries(spec.bindings) as [BindingName, string][]) {
    const queue = queueOfBinding(name);
    if (queue) fn.addEnvironment(bindingEnv(name), resources.queues[queue].queueUrl);
    else (SETTINGS[name as Exclude<BindingName, QueueBinding>] as Setting<BindingName>)(fn, mode as never, resources);
  }
  grantPolicy(fn, spec, resourceArns(resources));
}
