/**
 * Names of the service's own CloudWatch metrics (EMF, namespace `Crm`, dimension `service=crm`),
 * shared by the code that emits them (shared/observability/metrics.ts) and the dashboard
 * (lib/dashboard.ts). No imports: the CDK app reads this file too.
 */
export const METRICS_NAMESPACE = 'Crm';
export const METRICS_SERVICE = 'crm';

export const METRIC = {
  /** Every error envelope an operation answers; dimension `code` (e.g. `contacts.not_found`). */
  apiErrors: 'ApiErrors',
  /** Webhook deliveries that got a 2xx. */
  deliveriesDelivered: 'WebhookDeliveriesDelivered',
  /** Webhook deliveries that failed for good (all attempts used). */
  deliveriesFailed: 'WebhookDeliveriesFailed',
  /** Failed webhook attempts that were scheduled for a retry. */
  deliveriesRetried: 'WebhookDeliveriesRetried',
  /** Rows of imports, by outcome (dimension `outcome`: `imported`, `failed`, …). */
  importRows: 'ImportRows',
  /** Inbound e-mails received, by outcome (dimension `outcome`). */
  inboundMails: 'InboundMails',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
