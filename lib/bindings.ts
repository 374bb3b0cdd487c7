import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { type BindingMode, type BindingName, type Bindings, bindingEnv } from '../shared/config/bindings.js';
import type { FunctionSpec } from '../functions/topology.js';
import { bindTable, grantSystemKeySeed } from './grants.js';
import { acknowledge } from './nag.js';

/** The service's shared resources a binding may name (created once, in the parent stack). */
export interface ServiceResources {
  /** The RateLimit parameter's value. */
  rateLimit: string;
  table: dynamodb.ITable;
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
  inbound: { bucketName: string; bucketArn: string; domain: string };
}

/** Object prefixes of the buckets (the code's object keys start with them). */
export const IMPORT_FILES_PREFIX = 'imports/';
export const INBOUND_PREFIX = 'inbound/';
export const EXPORT_FILES_PREFIX = 'exports/';

type Grant<B extends BindingName> = (fn: lambda.Function, mode: BindingMode<B>, r: ServiceResources, spec: FunctionSpec) => void;

const prefixGrant = (fn: lambda.Function, actions: string[], bucketArn: string, nagName: string, prefix: string, why: string) => {
  fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources: [`${bucketArn}/${prefix}*`] }));
  // The grant names the prefix of one bucket: a wildcard by design (one object per import or message).
  acknowledge(fn.role!, `AwsSolutions-IAM5[Resource::${nagName}/${prefix}*]`, `${why}: no list, no delete.`);
};

/**
 * One grant per binding: sets the binding's variable and exactly the access its mode names.
 * Nothing else in lib/ grants a function anything.
 */
const GRANTS: { [B in BindingName]: Grant<B> } = {
  table: (fn, mode, r, spec) => {
    bindTable(fn, r.table, mode);
    // Read operations create the cursor signing key on first use (SYSTEM partition only).
    if (mode === 'read' && spec.trigger.kind === 'http') grantSystemKeySeed(fn, r.table);
  },
  deliveryQueue: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('deliveryQueue'), r.deliveryQueue.queueUrl);
    r.deliveryQueue.grantSendMessages(fn);
  },
  changesQueue: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('changesQueue'), r.changesQueue.queueUrl);
    r.changesQueue.grantSendMessages(fn);
  },
  secretsKey: (fn, mode, r) => {
    fn.addEnvironment(bindingEnv('secretsKey'), r.secretsKey.keyId);
    if (mode !== 'decrypt') r.secretsKey.grant(fn, 'kms:Encrypt');
    // webhooks-create decrypts the secret of its own stored idempotent result on a retry; the delivery worker signs.
    if (mode !== 'encrypt') r.secretsKey.grant(fn, 'kms:Decrypt');
  },
  importsBucket: (fn, mode, r) => {
    fn.addEnvironment(bindingEnv('importsBucket'), r.importsBucket.bucketName);
    // HeadObject is authorized as GetObject.
    prefixGrant(fn, mode === 'write' ? ['s3:PutObject', 's3:GetObject'] : ['s3:GetObject'], r.importsBucketArn, r.nagNames.importsBucket, IMPORT_FILES_PREFIX, 'Import files are one object per import under the imports/ prefix of the imports bucket');
  },
  importsQueue: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('importsQueue'), r.importsQueue.queueUrl);
    r.importsQueue.grantSendMessages(fn);
  },
  // --- exports (contract §16) ---
  exportsBucket: (fn, mode, r) => {
    fn.addEnvironment(bindingEnv('exportsBucket'), r.importsBucket.bucketName);
    // The worker writes the file as a multipart upload (PutObject covers create, part and complete) and aborts an interrupted one;
    // the read operations presign downloads (a presigned GET is authorized as the signer's GetObject).
    const actions = mode === 'write' ? ['s3:PutObject', 's3:AbortMultipartUpload'] : ['s3:GetObject'];
    prefixGrant(fn, actions, r.importsBucketArn, r.nagNames.importsBucket, EXPORT_FILES_PREFIX, 'Export files are one object per export under the exports/ prefix of the imports bucket');
  },
  exportsQueue: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('exportsQueue'), r.exportsQueue.queueUrl);
    r.exportsQueue.grantSendMessages(fn);
  },
  // --- end exports ---
  inboundBucket: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('inboundBucket'), r.inbound.bucketName);
    prefixGrant(fn, ['s3:GetObject'], r.inbound.bucketArn, r.nagNames.inboundBucket, INBOUND_PREFIX, 'Raw inbound messages are stored by SES under inbound/ (object keys are SES message ids)');
  },
  rateLimit: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('rateLimit'), r.rateLimit);
  },
  inboundDomain: (fn, _mode, r) => {
    fn.addEnvironment(bindingEnv('inboundDomain'), r.inbound.domain);
  },
};

/** Applies every binding a function declares. */
export function bind(fn: lambda.Function, spec: FunctionSpec, resources: ServiceResources): void {
  for (const [name, mode] of Object.entries(spec.bindings) as [BindingName, string][]) {
    (GRANTS[name] as Grant<BindingName>)(fn, mode as never, resources, spec);
  }
}

export type { Bindings };
