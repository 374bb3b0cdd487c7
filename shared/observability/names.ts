/**
 * Names of the service's own CloudWatch metrics (EMF, namespace `Crm`, dimension `service=crm`),
 * shared by the code that emits them (shared/observability/metrics.ts) and the dashboard
 * (lib/dashboard.ts). No imports: the CDK app reads this file too.
 */
export const METRICS_NAMESPACE = 'Crm';
export const METRICS_SERVICE = 'crm';

export const METRIC = {
  /**
   * Every error envelope an API function answers; dimension `code` (e.g. `contacts.not_found`).
   * Not written as EMF: a metric filter on each API function's log group counts the log lines
   * that carry API_ERROR_LOG_KEY (lib/function-group.ts), so the API bundles need no metrics
   * library.
   */
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

/** The log-line key (its value the error code) that marks an error answer; see METRIC.apiErrors. */
export const API_ERROR_LOG_KEY = 'api_error';

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
