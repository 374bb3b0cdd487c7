import { Annotations, Aws, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as sesActions from 'aws-cdk-lib/aws-ses-actions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { INBOUND_PREFIX } from './bindings.js';
import { privateBucket } from './buckets.js';
import { acknowledge, NAG_REASONS } from './nag.js';

export { INBOUND_PREFIX };
/** Raw messages are kept this long (they are parsed and stored in the table within seconds). */
export const RAW_MESSAGE_RETENTION = Duration.days(14);
/** Used when neither `-c inboundDomain=…` nor CRM_INBOUND_DOMAIN is set (synth works; no mail arrives). */
export const PLACEHOLDER_INBOUND_DOMAIN = 'inbound.example.invalid';

export interface InboundEmailProps {
  /** The mail domain (its MX record points at SES inbound: docs/deploy.md). Default: context `inboundDomain`, then CRM_INBOUND_DOMAIN. */
  domain?: string;
  removalPolicy: RemovalPolicy;
}

/**
 * Inbound email deployed (contract §11): an SES receipt rule set whose rule takes every message
 * for the domain (spam and virus scan on) and stores the raw message in a private, encrypted S3
 * bucket (SSL only, public access blocked, objects expire); the bucket's ObjectCreated events go
 * to a queue that runs the processing function (functions/inbound/process.ts); messages that fail
 * 5 times go to a dead-letter queue. The function may read objects under the prefix and nothing
 * else of S3.
 *
 * SES allows one active receipt rule set per region: after the first deploy, activate this one
 * (`aws ses set-active-receipt-rule-set --rule-set-name <RuleSetName output>`; docs/deploy.md).
 */
export class InboundEmail extends Construct {
  readonly domain: string;
  readonly bucket: s3.Bucket;
  readonly ruleSet: ses.ReceiptRuleSet;
  readonly bucketName: string;
  readonly bucketArn: string;
  /** The bucket's ObjectCreated events, consumed by the function. */
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: InboundEmailProps) {
    super(scope, id);
    const configured = props.domain ?? (this.node.tryGetContext('inboundDomain') as string | undefined) ?? process.env.CRM_INBOUND_DOMAIN;
    this.domain = (configured || PLACEHOLDER_INBOUND_DOMAIN).toLowerCase();
    if (!configured) Annotations.of(this).addWarningV2('crm:inboundDomain', `No inbound mail domain set (-c inboundDomain=… or CRM_INBOUND_DOMAIN): using ${PLACEHOLDER_INBOUND_DOMAIN}, which receives nothing.`);

    // A name known before the bucket exists: the queue policy and the function's grant name the
    // bucket without referring to it, so the bucket's notification can depend on the queue policy
    // (no cycle, and no notification custom resource).
    ({ bucket: this.bucket, bucketName: this.bucketName, bucketArn: this.bucketArn } = privateBucket(this, 'RawMessages', {
      prefix: 'crm-inbound',
      expire: { id: 'expire-raw-messages', prefix: INBOUND_PREFIX, after: RAW_MESSAGE_RETENTION },
      removalPolicy: props.removalPolicy,
      noAccessLogs: 'Raw inbound messages live at most 14 days and are written only by SES; access is logged by CloudTrail data events where enabled, not by server access logs.',
    }));

    // ObjectCreated → queue → function: failed messages come back after the visibility timeout
    // and go to the dead-letter queue after 5 receives (the raw message stays in the bucket).
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    acknowledge(this.deadLetterQueue, 'AwsSolutions-SQS3', NAG_REASONS.failureQueueIsDlq);
    acknowledge(this.deadLetterQueue, 'Serverless-SQSRedrivePolicy', NAG_REASONS.failureQueueIsDlq);
    const timeout = Duration.seconds(60);
    this.queue = new sqs.Queue(this, 'Events', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(timeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
    this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'ObjectCreatedFromRawMessages',
        principals: [new iam.ServicePrincipal('s3.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queueArn],
        conditions: { ArnLike: { 'aws:SourceArn': this.bucketArn }, StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
    );

    const cfnBucket = this.bucket.node.defaultChild as s3.CfnBucket;
    cfnBucket.notificationConfiguration = {
      queueConfigurations: [{ event: 's3:ObjectCreated:*', queue: this.queue.queueArn, filter: { s3Key: { rules: [{ name: 'prefix', value: INBOUND_PREFIX }] } } }],
    };
    // S3 checks that it may send when the notification is set: the queue policy first.
    cfnBucket.node.addDependency(this.queue.node.findChild('Policy'));

    this.ruleSet = new ses.ReceiptRuleSet(this, 'RuleSet', {
      rules: [
        {
          recipients: [this.domain],
          scanEnabled: true,
          tlsPolicy: ses.TlsPolicy.OPTIONAL,
          actions: [new sesActions.S3({ bucket: this.bucket, objectKeyPrefix: INBOUND_PREFIX })],
        },
      ],
    });
  }
}
