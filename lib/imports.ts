import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { privateBucket } from './buckets.js';
import { addJobQueue, IMPORT_QUEUE } from './job-queue.js';

/** Uploaded and inline import files are removed this long after they were written. */
export const IMPORT_FILE_RETENTION = Duration.days(7);

export interface ImportsProps {
  removalPolicy: RemovalPolicy;
  /** The stack's alarm factory (actions to the alarm topic). */
  alarm: (id: string, props: cloudwatch.AlarmProps) => unknown;
}

/**
 * CSV imports' resources (contract §10): a private, encrypted bucket for the files (SSL only,
 * public access blocked, files expire after 7 days), the import queue with its dead-letter queue,
 * and their alarms (`addJobQueue`, lib/job-queue.ts, as every job queue). The worker and the operations that use them are functions of the topology;
 * their bindings (`importsBucket`, `importsQueue`: lib/bindings.ts) grant exactly the `imports/`
 * prefix and the send, nobody may list or delete.
 */
export class Imports extends Construct {
  readonly bucket: s3.Bucket;
  /** The bucket's ARN spelled from its name (grants in nested stacks name it without a cross-stack reference). */
  readonly bucketArn: string;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: ImportsProps) {
    super(scope, id);
    ({ bucket: this.bucket, bucketArn: this.bucketArn } = privateBucket(this, 'Files', {
      prefix: 'crm-imports',
      expire: { id: 'expire-import-files', after: IMPORT_FILE_RETENTION },
      removalPolicy: props.removalPolicy,
      noAccessLogs: 'Import files live at most 7 days and are written only through presigned URLs of imports-create; access is logged by CloudTrail data events where enabled, not by server access logs.',
    }));

    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = addJobQueue(this, { ...IMPORT_QUEUE, alarm: props.alarm }));
  }
}
