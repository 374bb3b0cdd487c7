import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * shared/observability/metrics.ts: EMF lines inside Lambda, nothing at all locally and in tests.
 * The module keeps one Metrics instance, so each case loads a fresh copy.
 */
async function load(env: Record<string, string | undefined>) {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return import('../../shared/observability/metrics.js');
}

function captureStdout(): { lines: () => string[]; restore: () => void } {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return { lines: () => written.join('').split('\n').filter(Boolean), restore: () => spy.mockRestore() };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('countMetric', () => {
  it('writes one EMF line per call inside Lambda, with the namespace, service and extra dimensions', async () => {
    const { countMetric, METRIC, METRICS_NAMESPACE } = await load({ AWS_LAMBDA_FUNCTION_NAME: 'crm-test', CRM_LOCAL: undefined, POWERTOOLS_METRICS_DISABLED: undefined, POWERTOOLS_DEV: undefined });
    const out = captureStdout();
    try {
      countMetric(METRIC.apiErrors, 1, { code: 'contacts.not_found' });
      countMetric(METRIC.deliveriesDelivered, 3);
    } finally {
      out.restore();
    }
    const [first, second] = out.lines().map((l) => JSON.parse(l));
    expect(first._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: METRICS_NAMESPACE, Dimensions: [expect.arrayContaining(['service', 'code'])], Metrics: [{ Name: 'ApiErrors', Unit: 'Count' }] });
    expect(first).toMatchObject({ service: 'crm', code: 'contacts.not_found', ApiErrors: 1 });
    expect(second).toMatchObject({ service: 'crm', WebhookDeliveriesDelivered: 3 });
    expect(out.lines()).toHaveLength(2);
  });

  it('is silent outside Lambda and in local mode', async () => {
    for (const env of [{ AWS_LAMBDA_FUNCTION_NAME: undefined }, { AWS_LAMBDA_FUNCTION_NAME: 'crm-test', CRM_LOCAL: 'true' }, { AWS_LAMBDA_FUNCTION_NAME: 'crm-test', POWERTOOLS_METRICS_DISABLED: 'true' }]) {
      const { countMetric, METRIC } = await load(env);
      const out = captureStdout();
      try {
        countMetric(METRIC.apiErrors, 1, { code: 'api.internal' });
      } finally {
        out.restore();
      }
      expect(out.lines(), JSON.stringify(env)).toEqual([]);
    }
  });

  it('counts every error envelope of an operation by code (the operation pipeline)', async () => {
    await load({ AWS_LAMBDA_FUNCTION_NAME: 'crm-test', CRM_LOCAL: undefined, POWERTOOLS_METRICS_DISABLED: undefined, POWERTOOLS_DEV: undefined });
    const { operation } = await import('../../shared/http/operation.js');
    const { ApiError } = await import('../../shared/errors.js');
    const { apiEvent } = await import('../../local/invoke.js');
    const { lambdaContext } = await import('../../local/server.js');
    const probe = operation({
      name: 'probe-metrics',
      family: 'contacts',
      parse: (body) => body,
      run: async () => {
        throw new ApiError('contacts.not_found', 'contact not found');
      },
    });
    const out = captureStdout();
    let status: number | undefined;
    try {
      status = (await probe(apiEvent('probe-metrics', {}, { accountId: 'a', userId: 'u' }), lambdaContext('probe-metrics'))).statusCode;
    } finally {
      out.restore();
    }
    expect(status).toBe(404);
    const emf = out.lines().filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l));
    expect(emf).toEqual([expect.objectContaining({ service: 'crm', code: 'contacts.not_found', ApiErrors: 1 })]);
  });
});

