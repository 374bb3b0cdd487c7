import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { apiEvent } from '../../local/invoke.js';
import { lambdaContext } from '../../local/handlers.js';
import { ApiError } from '../../shared/errors.js';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';
import { operation } from '../../shared/http/operation.js';
import { API_ERROR_LOG_KEY } from '../../shared/observability/names.js';

/** The request id (API Gateway's requestContext.requestId) is in every error body and every log line of the request. */
const auth = { accountId: randomUUID(), userId: randomUUID() };

function captureLogs<T>(fn: () => Promise<T>): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const written: string[] = [];
  const write = (chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  };
  // Powertools writes errors to stderr, the rest to stdout.
  const spies = [vi.spyOn(process.stdout, 'write').mockImplementation(write), vi.spyOn(process.stderr, 'write').mockImplementation(write)];
  const level = logger.getLevelName();
  logger.setLogLevel('INFO');
  return fn()
    .then((result) => ({ result, lines: written.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) }))
    .finally(() => {
      logger.setLogLevel(level);
      for (const spy of spies) spy.mockRestore();
    });
}

const probe = (fail?: ApiError) =>
  operation({
    name: 'probe-run',
    family: 'contacts',
    access: 'write',
    parse: (body) => body,
    run: async () => {
      logger.info('inside the run');
      if (fail) throw fail;
      return { fine: true };
    },
  });

describe('request_id', () => {
  it('is in the error body and on the log lines written while the request runs, and only then', async () => {
    const event = apiEvent('probe-run', {}, auth);
    const requestId = event.requestContext.requestId;
    const { result, lines } = await captureLogs(async () => {
      const res = await probe(new ApiError('contacts.not_found', 'contact not found'))(event, lambdaContext('probe-run'));
      logger.info('after the request');
      return res;
    });
    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body!)).toEqual({ ok: false, error: { code: 'contacts.not_found', message: 'contact not found', request_id: requestId } });
    expect(lines.find((l) => l.message === 'inside the run')).toMatchObject({ request_id: requestId, operation: 'probe-run' });
    expect(lines.find((l) => l.message === 'after the request')).not.toHaveProperty('request_id');
  });

  it('is on unexpected errors (500) and their error log line too', async () => {
    const event = apiEvent('probe-run', {}, auth);
    const requestId = event.requestContext.requestId;
    const failing = operation({
      name: 'probe-crash',
      family: 'contacts',
      access: 'write',
      parse: (body) => body,
      run: async () => {
        throw new Error('boom');
      },
    });
    const { result, lines } = await captureLogs(() => failing(event, lambdaContext('probe-crash')));
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body!).error).toMatchObject({ code: 'contacts.internal', request_id: requestId });
    expect(lines.find((l) => l.level === 'ERROR')).toMatchObject({ request_id: requestId, [API_ERROR_LOG_KEY]: 'contacts.internal', status: 500 });
  });

  it('is absent when no request id is known (no empty value)', async () => {
    const event = apiEvent('probe-run', {}, auth);
    (event.requestContext as { requestId?: string }).requestId = '';
    const res = await probe(new ApiError('contacts.not_found', 'contact not found'))(event, lambdaContext('probe-run'));
    expect(JSON.parse(res.body!).error).not.toHaveProperty('request_id');
  });

  it('is the Lambda request id on the log lines of other functions (instrumented), with or without a context', async () => {
    const handler = instrumented('probe-worker', async (event: { n: number }) => {
      logger.info('working');
      return event.n + 1;
    });
    const context = lambdaContext('probe-worker');
    const { result, lines } = await captureLogs(async () => [await handler({ n: 1 }, context), await handler({ n: 2 })]);
    expect(result).toEqual([2, 3]);
    const working = lines.filter((l) => l.message === 'working');
    expect(working[0]).toMatchObject({ request_id: context.awsRequestId, function: 'probe-worker' });
    expect(working[1]).not.toHaveProperty('request_id');
  });
});
