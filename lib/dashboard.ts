import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, type MetricName, METRICS_NAMESPACE, METRICS_SERVICE } from '../shared/observability/names.js';
import type { StageConfig } from './stage.js';

export interface CrmDashboardProps {
  stage: StageConfig;
  api: apigwv2.HttpApi;
  /** Every Lambda of the stack by name (CrmStack.functions). */
  functions: ReadonlyMap<string, lambda.Function>;
  /** `byName`: every queue of the topology (their backlog: the oldest message's age and depth; in flight and handled per minute). */
  queues: { delivery: sqs.IQueue; deliveryDlq: sqs.IQueue; streamFailures: sqs.IQueue; byName?: Readonly<Record<string, sqs.IQueue>> };
  table: dynamodb.ITable;
  /** The control table (rate limits, key use, idempotency, search entries, the change log). */
  controlTable?: dynamodb.ITable;
}

const PERIOD = Duration.minutes(5);
const CHUNK = 50;

/** One of the service's own metrics (EMF, shared/observability/metrics.ts), summed per period. */
export const serviceMetric = (name: MetricName, label: string) =>
  new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service: METRICS_SERVICE }, statistic: 'Sum', period: PERIOD, label });

/** Every dimension value of a metric that has one extra dimension (error code, outcome), one line each. */
export const searchByDimension = (name: MetricName, dimension: string, label: string) =>
  new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${dimension},service} MetricName="${name}" service="${METRICS_SERVICE}"', 'Sum', ${PERIOD.toSeconds()})`,
    usingMetrics: {},
    label,
    period: PERIOD,
  });

/**
 * The operator's dashboard (`crm-<stage>`): API traffic and errors by code, webhook deliveries,
 * imports and inbound mail, the functions, the queues, the table, and the state of every alarm of
 * the stack. Create it last in the stack: it lists the alarms that exist at that point.
 */
export class CrmDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: CrmDashboardProps) {
    super(scope, id);
    const { api, functions, queues, table, controlTable } = props;
    const fns = [...functions.entries()];
    const width = 8;
    const graph = (title: string, left: cloudwatch.IMetric[], extra: Partial<cloudwatch.GraphWidgetProps> = {}) =>
      new cloudwatch.GraphWidget({ title, left, width, height: 6, period: PERIOD, ...extra });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `crm-${props.stage.name}`,
      defaultInterval: Duration.hours(6),
    });

    const alarms = Stack.of(this)
      .node.findAll()
      .filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm);

    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# CRM ${props.stage.name}\nAPI, webhooks, imports and inbound mail. Error bodies carry \`request_id\`: search it in the API access log and the functions' log groups (Logs Insights: \`filter request_id = "…"\`).`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph('API requests and errors', [
        api.metricCount({ period: PERIOD, statistic: 'Sum', label: 'requests' }),
        api.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }),
        api.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' }),
      ]),
      graph('API errors by code', [searchByDimension(METRIC.apiErrors, 'code', '')]),
      graph('API latency (ms)', [
        api.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
        api.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
        api.metricIntegrationLatency({ period: PERIOD, statistic: 'p99', label: 'integration p99' }),
      ]),
    );
    this.dashboard.addWidgets(
      graph('Webhook deliveries', [
        serviceMetric(METRIC.deliveriesDelivered, 'delivered'),
        serviceMetric(METRIC.deliveriesRetried, 'attempt failed, retry scheduled'),
        serviceMetric(METRIC.deliveriesFailed, 'failed for good'),
      ]),
      graph('Delivery queue', [
        queues.delivery.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'visible' }),
        queues.deliveryDlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'dead letters' }),
        queues.streamFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'stream failures' }),
      ], {
        right: [queues.delivery.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: 'oldest message (s)' })],
      }),
      graph('Imports and inbound mail', [searchByDimension(METRIC.importRows, 'outcome', 'import rows'), searchByDimension(METRIC.inboundMails, 'outcome', 'inbound mails')]),
    );
    // CloudWatch allows 100 metrics per graph and 100 alarms per alarm-status widget: chunks of 50.
    for (let i = 0; i < fns.length; i += CHUNK) {
      const part = fns.slice(i, i + CHUNK);
      const suffix = fns.length > CHUNK ? ` (${i + 1}–${i + part.length})` : '';
      this.dashboard.addWidgets(
        graph(`Function errors${suffix}`, part.map(([name, fn]) => fn.metricErrors({ period: PERIOD, statistic: 'Sum', label: name })), { stacked: true }),
        graph(`Function throttles${suffix}`, part.map(([name, fn]) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum', label: name })), { stacked: true }),
        graph(`Function duration p99 (ms)${suffix}`, part.map(([name, fn]) => fn.metricDuration({ period: PERIOD, statistic: 'p99', label: name }))),
      );
    }
    const stream = functions.get('stream');
    this.dashboard.addWidgets(
      graph('Table capacity', [
        table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'RCU' }),
        table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'WCU' }),
        ...(controlTable
          ? [
              controlTable.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'control RCU' }),
              controlTable.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'control WCU (search entries, change log, rate limits)' }),
            ]
          : []),
      ]),
      graph('Table throttles and user errors', [
        table.metricThrottledRequestsForOperations({ period: PERIOD, label: 'throttled requests' }),
        table.metricUserErrors({ period: PERIOD, statistic: 'Sum', label: 'user errors (account)' }),
      ]),
      // A graph of its own: each table's throttle expression names its operations' metrics alike.
      ...(controlTable ? [graph('Control table throttles', [controlTable.metricThrottledRequestsForOperations({ period: PERIOD, label: 'throttled requests' })])] : []),
      graph('Stream consumer lag (ms)', stream ? [stream.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum', label: 'iterator age' })] : []),
    );
    // Backlogs: the stream router's iterator age and each queue's oldest message (the changes queue: the account furthest behind).
    const byName = Object.entries(queues.byName ?? {});
    const minute = Duration.minutes(1);
    this.dashboard.addWidgets(
      graph('Queue backlog: oldest message (s)', byName.map(([name, q]) => q.metricApproximateAgeOfOldestMessage({ period: minute, statistic: 'Maximum', label: name })), { width: 12 }),
      graph('Queue backlog: messages', byName.map(([name, q]) => q.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum', label: name })), { width: 12 }),
    );
    // A stuck consumer (each queue's stall alarm): messages in flight that stay in flight while none is handled.
    this.dashboard.addWidgets(
      graph('Queue in flight: taken, not yet finished', byName.map(([name, q]) => q.metricApproximateNumberOfMessagesNotVisible({ period: minute, statistic: 'Maximum', label: name })), { width: 12 }),
      graph('Queue handled: messages deleted per minute', byName.map(([name, q]) => q.metricNumberOfMessagesDeleted({ period: minute, statistic: 'Sum', label: name })), { width: 12, period: minute }),
    );
    for (let i = 0; i < alarms.length; i += CHUNK) {
      const part = alarms.slice(i, i + CHUNK);
      this.dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: alarms.length > CHUNK ? `Alarms (${i + 1}–${i + part.length})` : 'Alarms', alarms: part, width: 24, height: Math.max(3, Math.ceil(part.length / 4) + 1) }));
    }
  }
}
