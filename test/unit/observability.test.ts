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

function captureOutput(): { lines: () => string[]; restore: () => void } {
  const written: string[] = [];
  const write = (chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  };
  // stdout and stderr (Powertools Logger writes ERROR lines to stderr).
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(write), vi.spyOn(process.stderr, 'write').mockImplementation(write)];
  return { lines: () => written.join('').split('\n').filter(Boolean), restore: () => spies.forEach((s) => s.mockRestore()) };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('countMetric', () => {
  it('writes one EMF line per call inside Lambda, with the namespace, service and extra dimensions', async () => {
    const { countMetric, METRIC, METRICS_NAMESPACE } = await load({ AWS_LAMBDA_FUNCTION_NAME: 'crm-test', CRM_LOCAL: undefined, POWERTOOLS_METRICS_DISABLED: undefined, POWERTOOLS_DEV: undefined });
    const out = captureOutput();
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
      const out = captureOutput();
      try {
        countMetric(METRIC.apiErrors, 1, { code: 'api.internal' });
      } finally {
        out.restore();
      }
      expect(out.lines(), JSON.stringify(env)).toEqual([]);
    }
  });

  it('writes one log line per error envelope, with the code the ApiErrors metric filter counts, and no EMF', async () => {
    await load({ AWS_LAMBDA_FUNCTION_NAME: 'crm-test', CRM_LOCAL: undefined, POWERTOOLS_METRICS_DISABLED: undefined, POWERTOOLS_DEV: undefined, POWERTOOLS_LOG_LEVEL: 'INFO' });
    const { operation } = await import('../../shared/http/operation.js');
    const { ApiError } = await import('../../shared/errors.js');
    const { apiEvent } = await import('../../local/invoke.js');
    const { lambdaContext } = await import('../../local/handlers.js');
    const { API_ERROR_LOG_KEY } = await import('../../shared/observability/names.js');
    const failing = (error: Error) =>
      operation({
        name: 'probe-errors',
        family: 'contacts',
        access: 'write',
        parse: (body) => body,
        run: async () => {
          throw error;
        },
      });
    const out = captureOutput();
    const statuses: number[] = [];
    try {
      for (const error of [new ApiError('contacts.not_found', 'contact not found'), new Error('boom')]) {
        statuses.push((await failing(error)(apiEvent('probe-errors', {}, { accountId: 'a', userId: 'u' }), lambdaContext('probe-errors'))).statusCode!);
      }
    } finally {
      out.restore();
    }
    expect(statuses).toEqual([404, 500]);
    const lines = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => '_aws' in l)).toEqual([]);
    const answers = lines.filter((l) => API_ERROR_LOG_KEY in l);
    expect(answers).toEqual([
      expect.objectContaining({ level: 'INFO', service: 'crm', [API_ERROR_LOG_KEY]: 'contacts.not_found', status: 404, operation: 'probe-errors' }),
      expect.objectContaining({ level: 'ERROR', service: 'crm', [API_ERROR_LOG_KEY]: 'contacts.internal', status: 500, error: expect.objectContaining({ message: 'boom' }) }),
    ]);
  });

  it('answers an unknown operation (the fallback route) with the same log line', async () => {
    await load({ AWS_LAMBDA_FUNCTION_NAME: 'crm-test', POWERTOOLS_LOG_LEVEL: 'INFO' });
    const { handler } = await import('../../functions/fallback.js');
    const { API_ERROR_LOG_KEY } = await import('../../shared/observability/names.js');
    const out = captureOutput();
    try {
      expect((await handler({ rawPath: '/api/contacts-lst', requestContext: { http: { method: 'POST' } } as never })).statusCode).toBe(404);
    } finally {
      out.restore();
    }
    const lines = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ service: 'crm', [API_ERROR_LOG_KEY]: 'api.unknown_operation', status: 404 })]);
  });
});

