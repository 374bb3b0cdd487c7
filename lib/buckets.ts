import { Aws, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { acknowledge } from './nag.js';

export interface PrivateBucketProps {
  /** The name's prefix (`crm-imports`): the name is `<prefix>-<account>-<region>-<8 characters of the construct's address>`. */
  prefix: string;
  /** Its one lifecycle rule: objects (under `prefix`, when given) expire after `expiration`. */
  expire: { id: string; prefix?: string; after: Duration };
  removalPolicy: RemovalPolicy;
  /** Why it keeps no server access logs (AwsSolutions-S1). */
  noAccessLogs: string;
}

/**
 * A bucket of files only the stack's functions (and SES) reach: encrypted (SSE-S3), public access
 * blocked, owner-enforced, SSL only, unversioned, its objects expiring. Its name is known before it
 * exists (`bucketArn` spelled from it), so grants and policies name it without referring to it: no
 * cross-stack reference from a nested stack, no cycle with a notification.
 */
export function privateBucket(scope: Construct, id: string, props: PrivateBucketProps): { bucket: s3.Bucket; bucketName: string; bucketArn: string } {
  const bucketName = `${props.prefix}-${Aws.ACCOUNT_ID}-${Aws.REGION}-${scope.node.addr.slice(0, 8)}`;
  const bucket = new s3.Bucket(scope, id, {
    bucketName,
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    enforceSSL: true,
    versioned: false,
    lifecycleRules: [{ id: props.expire.id, ...(props.expire.prefix ? { prefix: props.expire.prefix } : {}), expiration: props.expire.after, abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    removalPolicy: props.removalPolicy,
  });
  acknowledge(bucket, 'AwsSolutions-S1', props.noAccessLogs);
  return { bucket, bucketName, bucketArn: `arn:${Aws.PARTITION}:s3:::${bucketName}` };
}
