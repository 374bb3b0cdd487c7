import { Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Access, OperationEntry } from '../functions/operations.js';
import type { ApiFunction } from './api-function.js';
import { bindTable, grantImportNeeds, IMPORT_FILES_PREFIX } from './grants.js';
import { acknowledge } from './nag.js';

/** Uploaded and inline import files are removed this long after they were written. */
export const IMPORT_FILE_RETENTION = Duration.days(7);
/** The worker's time limit; a longer job continues in a new message before it (shared/imports/worker.ts). */
export const IMPORT_WORKER_TIMEOUT = Duration.minutes(15);

export interface ImportsProps {
  /** The registry entry (`internalFunctions.importWorker`). */
  entry: { entry: string; access: Access };
  /** The stack's function factory (defaults, alarms and dashboard registration). */
  fn: (name: string, entry: string, extra?: Partial<ConstructorParameters<typeof ApiFunction>[2]>) => ApiFunction;
  table: dynamodb.ITable;
  removalPolicy: RemovalPolicy;
  /** The stack's functions by registry name: the operations whose `needs` name the bucket or the queue get exactly those grants. */
  functions: ReadonlyMap<string, ApiFunction>;
  operations: readonly OperationEntry[];
  alarmTopic: sns.ITopic;
}

/**
 * CSV imports deployed (contract §10): a private, encrypted bucket for the files (SSL only,
 * public access blocked, files expire after 7 days), the import queue with its dead-letter queue,
 * and the SQS-fed worker (functions/imports/worker.ts), one job per invocation. Least privilege:
 * imports-create may put and head files under `imports/`, imports-start may head them, the
 * worker may read them; nobody may list or delete. Alarms: a message in the dead-letter queue,
 * a failed worker invocation, a job message waiting more than 30 minutes.
 */
export class Imports extends Construct {
  readonly bucket: s3.Bucket;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly function: ApiFunction;

  constructor(scope: Construct, id: string, props: ImportsProps) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Files', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [{ id: 'expire-import-files', expiration: IMPORT_FILE_RETENTION, abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: props.removalPolicy,
    });
    acknowledge(this.bucket, 'AwsSolutions-S1', 'Import files live at most 7 days and are written only through presigned URLs of imports-create; access is logged by CloudTrail data events where enabled, not by server access logs.');

    const queueDefaults = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { ...queueDefaults, retentionPeriod: Duration.days(14) });
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', 'This is the dead-letter queue of the import queue.');
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', 'This is the dead-letter queue of the import queue.');
    this.queue = new sqs.Queue(this, 'Queue', {
      ...queueDefaults,
      // A message stays invisible while its job runs (a job hands over before the time limit).
      visibilityTimeout: IMPORT_WORKER_TIMEOUT.plus(Duration.minutes(1)),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });

    this.function = props.fn('importWorker', props.entry.entry, { timeout: IMPORT_WORKER_TIMEOUT, memorySize: 1024 });
    bindTable(this.function, props.table, props.entry.access);
    // The worker sends a job's continuation message and reads (and heads) the files; it never writes, lists or deletes them.
    grantImportNeeds(this.function, ['imports-queue'], this.bucket, this.queue);
    this.function.addEnvironment('IMPORTS_BUCKET', this.bucket.bucketName);
    this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${IMPORT_FILES_PREFIX}*`)] }));
    this.function.addEventSource(new SqsEventSource(this.queue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: 5 }));
    acknowledge(this.function, 'Serverless-LambdaEventSourceMappingDestination', 'Failed import messages go to the import queue\'s dead-letter queue (redrive policy).');

    for (const op of props.operations) {
      const target = props.functions.get(op.name);
      if (!target || !op.needs?.some((n) => n === 'imports-bucket' || n === 'imports-queue')) continue;
      grantImportNeeds(target, op.needs, this.bucket, this.queue);
      if (op.needs.includes('imports-bucket')) this.acknowledgePrefix(target);
    }
    this.acknowledgePrefix(this.function);

    const notify = new cwActions.SnsAction(props.alarmTopic);
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps) => {
      new cloudwatch.Alarm(this, alarmId, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, ...alarmProps }).addAlarmAction(notify);
    };
    const fiveMinutes = Duration.minutes(5);
    alarm('DlqDepth', {
      alarmDescription: 'Import messages are waiting in the import dead-letter queue (a job failed five times).',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    alarm('WorkerErrors', {
      alarmDescription: 'Lambda importWorker: invocation errors (crash or timeout).',
      metric: this.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    alarm('QueueAge', {
      alarmDescription: 'An import job has waited more than 30 minutes for a worker.',
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
      threshold: Duration.minutes(30).toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
  }

  /** The object grants name the `imports/` prefix of the one bucket: a wildcard by design (one object per import). */
  private acknowledgePrefix(target: ApiFunction): void {
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket);
    acknowledge(target.role!, `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${IMPORT_FILES_PREFIX}*]`, 'Import files are one object per import under the imports/ prefix of the imports bucket; the grant names that prefix only (no list, no delete).');
  }
}
