import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { type BindingMode, type BindingName, bindingEnv } from '../shared/config/bindings.js';
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
  deliveryQueue: sqs.IQueue;
  /** The FIFO record-change queue (one message group per account). */
  changesQueue: sqs.IQueue;
  secretsKey: kms.IKey;
  importsBucket: s3.IBucket;
  importsBucketArn: string;
  /** How cdk-nag names each bucket's ARN in a nested stack's policy (for the prefix grants' acknowledgements). */
  nagNames: { importsBucket: string; inboundBucket: string };
  importsQueue: sqs.IQueue;
  /** The export job queue (contract §16; the files go to the imports bucket's `exports/` prefix). */
  exportsQueue: sqs.IQueue;
  /** The erasure job queue (contract §18). */
  erasuresQueue: sqs.IQueue;
  /** The index-build queue (contract §17). */
  indexBuildsQueue: sqs.IQueue;
  inbound: { bucketName: string; bucketArn: string; domain: string };
}

export { EXPORT_FILES_PREFIX, IMPORT_FILES_PREFIX, INBOUND_PREFIX };

/** The ARNs the policy data names (shared/schemas/policies.ts). */
export const resourceArns = (r: ServiceResources): ResourceArns => ({
  table: r.table.tableArn,
  tableIndexes: INDEX_NAMES.map((name) => `${r.table.tableArn}/index/${name}`),
  control: r.controlTable.tableArn,
  deliveryQueue: r.deliveryQueue.queueArn,
  changesQueue: r.changesQueue.queueArn,
  importsQueue: r.importsQueue.queueArn,
  exportsQueue: r.exportsQueue.queueArn,
  erasuresQueue: r.erasuresQueue.queueArn,
  indexBuildsQueue: r.indexBuildsQueue.queueArn,
  importsBucket: r.importsBucketArn,
  inboundBucket: r.inbound.bucketArn,
  secretsKey: r.secretsKey.keyArn,
});

type Setting<B extends BindingName> = (fn: lambda.Function, mode: BindingMode<B>, r: ServiceResources) => void;

/** The prefix grants name one prefix of one bucket: a wildcard by design (one object per import or message). */
const prefixAck = (fn: lambda.Function, nagName: string, prefix: string, why: string) => acknowledge(fn.role!, `AwsSolutions-IAM5[Resource::${nagName}/${prefix}*]`, `${why}: no list, no delete.`);

/**
 * One setting per binding: the variable it sets (and the acknowledgement of a prefix grant). The
 * grants themselves are the function's policy as data (`grantPolicy`, shared/schemas/policies.ts).
 */
const SETTINGS: { [B in BindingName]: Setting<B> } = {
  table: (fn, _mode, r) => fn.addEnvironment(bindingEnv('table'), r.table.tableName),
  control: (fn, _mode, r) => fn.addEnvironment(bindingEnv('control'), r.controlTable.tableName),
  deliveryQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('deliveryQueue'), r.deliveryQueue.queueUrl),
  changesQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('changesQueue'), r.changesQueue.queueUrl),
  secretsKey: (fn, _mode, r) => fn.addEnvironment(bindingEnv('secretsKey'), r.secretsKey.keyId),
  importsBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('importsBucket'), r.importsBucket.bucketName);
    prefixAck(fn, r.nagNames.importsBucket, IMPORT_FILES_PREFIX, 'Import files are one object per import under the imports/ prefix of the imports bucket');
  },
  importsQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('importsQueue'), r.importsQueue.queueUrl),
  // --- exports (contract §16) ---
  exportsBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('exportsBucket'), r.importsBucket.bucketName);
    prefixAck(fn, r.nagNames.importsBucket, EXPORT_FILES_PREFIX, 'Export files are one object per export under the exports/ prefix of the imports bucket');
  },
  exportsQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('exportsQueue'), r.exportsQueue.queueUrl),
  // --- end exports ---
  erasuresQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('erasuresQueue'), r.erasuresQueue.queueUrl),
  indexBuildsQueue: (fn, _mode, r) => fn.addEnvironment(bindingEnv('indexBuildsQueue'), r.indexBuildsQueue.queueUrl),
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
    (SETTINGS[name] as Setting<BindingName>)(fn, mode as never, resources);
  }
  grantPolicy(fn, spec, resourceArns(resources));
}
