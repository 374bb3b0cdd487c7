/**
 * Each log line names the function that wrote it: locally several functions run at once in one
 * thread (the workers thread runs every background function), and keys appended to one shared
 * logger leaked from one function's lines into another's (an inbound line said `function: changes`).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { instrumented } from '../../shared/http/instrumented.js';
import { logger } from '../../shared/http/logger.js';

const lines: Array<Record<string, unknown>> = [];
afterEach(() => {
  vi.restoreAllMocks();
  lines.length = 0;
});

function capture() {
  const grab = (chunk: unknown) => {
    for (const line of String(chunk).split('\n')) {
      if (line.trim().startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(grab as never);
  vi.spyOn(process.stderr, 'write').mockImplementation(grab as never);
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void grab(args.join(' ')));
}

describe('log keys of concurrent invocations', () => {
  it('gives every line the function (and request) of the invocation that logged it, however they interleave', async () => {
    capture();
    const tick = () => new Promise((r) => setTimeout(r, 1));
    const fn = (name: string) =>
      instrumented(name, async (event: { n: number }) => {
        for (let i = 0; i < 5; i++) {
          logger.critical('step', { n: event.n, i });
          await tick();
        }
        return event.n;
      });
    const changes = fn('changes');
    const inbound = fn('inbound');
    await Promise.all([changes({ n: 1 }, { awsRequestId: 'r-changes' } as never), inbound({ n: 2 }, { awsRequestId: 'r-inbound' } as never), changes({ n: 3 })]);
    const steps = lines.filter((l) => l.message === 'step');
    expect(steps).toHaveLength(15);
    for (const line of steps) {
      expect(line.function).toBe(line.n === 2 ? 'inbound' : 'changes');
      expect(line.request_id).toBe(line.n === 1 ? 'r-changes' : line.n === 2 ? 'r-inbound' : undefined);
    }
    // Outside an invocation, no key of one is left behind.
    logger.critical('after');
    expect(lines.find((l) => l.message === 'after')).not.toHaveProperty('function');
  });
});
