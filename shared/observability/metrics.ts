import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRIC, type MetricName, METRICS_NAMESPACE, METRICS_SERVICE } from './names.js';

export { METRIC, type MetricName, METRICS_NAMESPACE, METRICS_SERVICE };

let metrics: Metrics | undefined;

/**
 * Metrics are written only inside Lambda (as CloudWatch EMF log lines, which CloudWatch turns
 * into metrics without any API call). Locally and in tests they are a no-op: no EMF JSON on
 * stdout. `POWERTOOLS_METRICS_DISABLED=true` switches them off in Lambda as well.
 */
export function metricsEnabled(): boolean {
  return Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME) && process.env.POWERTOOLS_METRICS_DISABLED !== 'true' && process.env.CRM_LOCAL !== 'true';
}

function instance(): Metrics {
  metrics ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
  return metrics;
}

/**
 * Counts `value` occurrences of `name` (a METRIC name), with optional extra dimensions (keep
 * their values few: every distinct value is a separate CloudWatch metric). Written at once as
 * one EMF line, so callers need no flush at the end of the invocation; pass a total (e.g. rows
 * of a batch) rather than calling once per item.
 */
export function countMetric(name: MetricName, value = 1, dimensions?: Record<string, string>): void {
  if (!metricsEnabled() || value <= 0) return;
  try {
    const single = instance().singleMetric();
    if (dimensions) single.addDimensions(dimensions);
    single.addMetric(name, MetricUnit.Count, value);
  } catch {
    // Metrics never fail a request.
  }
}
