import { Duration, NestedStack, type NestedStackProps, type RemovalPolicy } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { FunctionSpec, QueueName, Trigger } from '../functions/topology.js';
import { ApiFunction } from './api-function.js';
import { bind, type ServiceResources } from './bindings.js';
import { acknowledge, NAG_REASONS } from './nag.js';
import type { StageConfig } from './stage.js';
import { API_ERROR_LOG_KEY, METRIC, METRICS_NAMESPACE } from '../shared/observability/names.js';

/** `contacts-list` → `ContactsList` (construct ids, hence stable logical ids). */
export const constructIdFor = (name: string) =>
  name
    .split(/[^A-Za-z0-9_]+/)
    .flatMap((part) => part.split('_'))
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

/** What a trigger adapter may attach to (the parent stack's API, queues and table). */
export interface TriggerTargets {
  api: apigwv2.IHttpApi;
  /** The HTTP API's Lambda authorizer, created in the parent stack (absent for the edge group, which holds its function). */
  authorizer?: apigwv2.IHttpRouteAuthorizer;
  /** The table whose stream triggers the stream function. */
  table: dynamodb.ITable;
  queues: Record<QueueName, sqs.IQueue>;
  /** Where stream batches that failed every retry go. */
  streamFailures: sqs.IQueue;
  /** The queue that carries the inbound bucket's ObjectCreated events. */
  inboundEvents: sqs.IQueue;
}

export interface FunctionGroupProps extends NestedStackProps {
  stage: StageConfig;
  removal: RemovalPolicy;
  specs: readonly FunctionSpec[];
  resources: ServiceResources;
  triggers: TriggerTargets;
  alarmTopic: sns.ITopic;
}

/**
 * One nested stack of functions (an operation family, the workers, or the edge): each function of
 * the topology with its defaults (ApiFunction), its bindings (lib/bindings.ts), its trigger (one
 * adapter per kind below) and its error alarm. The parent stack holds the shared resources; a
 * family's growth never pushes another template toward CloudFormation's 500-resource limit.
 */
export class FunctionGroup extends NestedStack {
  readonly functions = new Map<string, ApiFunction>();

  constructor(scope: Construct, id: string, props: FunctionGroupProps) {
    super(scope, id, props);
    const { stage, resources, triggers } = props;
    const notify = new cwActions.SnsAction(props.alarmTopic);
    for (const spec of props.specs) {
      const cid = constructIdFor(spec.name);
      const asyncDlq = spec.trigger.kind === 'schedule' ? this.asyncDeadLetterQueue(cid) : undefined;
      const fn = new ApiFunction(this, `${cid}Function`, {
        entry: spec.entry,
        description: `crm ${stage.name}: ${spec.name}`,
        tracing: stage.tracing,
        logRetention: stage.logRetention as logs.RetentionDays,
        logRemovalPolicy: props.removal,
        logLevel: stage.logLevel,
        timeout: Duration.seconds(spec.timeoutSeconds),
        ...(spec.memoryMb ? { memorySize: spec.memoryMb } : {}),
        ...(asyncDlq ? { deadLetterQueue: asyncDlq } : {}),
        environment: { CRM_STAGE: stage.name, CRM_ALLOW_INSECURE_WEBHOOKS: 'false' },
      });
      bind(fn, spec, resources);
      this.attach(fn, cid, spec.trigger, triggers, asyncDlq);
      this.functions.set(spec.name, fn);
      if (spec.trigger.kind === 'http' || spec.trigger.kind === 'http-default') this.countApiErrors(fn, cid);
      // One alarm per function: crashes and timeouts (handled errors are envelopes, not Errors).
      new cloudwatch.Alarm(this, `${cid}Errors`, {
        alarmDescription: `Lambda ${spec.name}: invocation errors (crash or timeout).`,
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(notify);
    }
  }

  /**
   * The `ApiErrors` metric (namespace Crm, dimensions code and service, as the dashboard searches
   * it) from the log line every error answer writes (shared/http/logger.ts `logErrorAnswer`):
   * a metric filter, so the API bundles carry no metrics library.
   */
  private countApiErrors(fn: ApiFunction, cid: string): void {
    fn.logGroup.addMetricFilter(`${cid}ApiErrors`, {
      filterPattern: logs.FilterPattern.exists(`$.${API_ERROR_LOG_KEY}`),
      metricNamespace: METRICS_NAMESPACE,
      metricName: METRIC.apiErrors,
      metricValue: '1',
      unit: cloudwatch.Unit.COUNT,
      dimensions: { code: `$.${API_ERROR_LOG_KEY}`, service: '$.service' },
    });
  }

  /** The trigger adapters: one per kind of the topology. */
  private attach(fn: ApiFunction, cid: string, trigger: Trigger, t: TriggerTargets, asyncDlq?: sqs.IQueue): void {
    switch (trigger.kind) {
      case 'http':
        if (!t.authorizer) throw new Error(`${cid}: an http function needs the API authorizer`);
        new apigwv2.HttpRoute(this, `${cid}Route`, {
          httpApi: t.api,
          routeKey: apigwv2.HttpRouteKey.with(`/api/${trigger.operation}`, apigwv2.HttpMethod.POST),
          integration: new HttpLambdaIntegration(`${cid}Integration`, fn),
          authorizer: t.authorizer,
        });
        return;
      case 'http-default':
        // Unknown operation or other method: the contract's 404/405 envelope, no auth.
        acknowledge(
          new apigwv2.HttpRoute(this, 'DefaultRoute', { httpApi: t.api, routeKey: apigwv2.HttpRouteKey.DEFAULT, integration: new HttpLambdaIntegration('FallbackIntegration', fn) }),
          'AwsSolutions-APIG4',
          NAG_REASONS.fallbackRoute,
        );
        return;
      case 'authorizer':
        // The parent stack creates the HTTP API authorizer from this function (CrmStack).
        return;
      case 'stream':
        fn.addEventSource(
          new DynamoEventSource(t.table, {
            startingPosition: lambda.StartingPosition.TRIM_HORIZON,
            batchSize: trigger.batchSize,
            maxBatchingWindow: Duration.seconds(1),
            bisectBatchOnError: true,
            retryAttempts: 10,
            reportBatchItemFailures: true,
            onFailure: new SqsDlq(t.streamFailures),
          }),
        );
        acknowledge(fn.role!, 'AwsSolutions-IAM5[Resource::*]', NAG_REASONS.streamListStreams);
        return;
      case 'queue':
      case 'object': {
        const queue = trigger.kind === 'queue' ? t.queues[trigger.queue] : t.inboundEvents;
        fn.addEventSource(new SqsEventSource(queue, { batchSize: trigger.batchSize, reportBatchItemFailures: true, maxConcurrency: trigger.maxConcurrency }));
        acknowledge(fn, 'Serverless-LambdaEventSourceMappingDestination', NAG_REASONS.sqsMappingDestination);
        return;
      }
      case 'schedule':
        new events.Rule(this, `${cid}Schedule`, {
          description: `crm: runs ${cid} every ${trigger.everyMinutes} minute(s)`,
          schedule: events.Schedule.rate(Duration.minutes(trigger.everyMinutes)),
          targets: [new targets.LambdaFunction(fn, { retryAttempts: 2, maxEventAge: Duration.minutes(5), deadLetterQueue: asyncDlq })],
        });
        return;
    }
  }

  /** Where a scheduled function's failed asynchronous invocations go (a missed run is redone by the next). */
  private asyncDeadLetterQueue(cid: string): sqs.Queue {
    const queue = new sqs.Queue(this, `${cid}Dlq`, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    const reason = 'Dead-letter queue of a scheduled function\'s asynchronous invocations: it has no DLQ of its own (a missed run is redone by the next one).';
    acknowledge(queue, 'AwsSolutions-SQS3', reason);
    acknowledge(queue, 'Serverless-SQSRedrivePolicy', reason);
    return queue;
  }
}
