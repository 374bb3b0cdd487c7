/**
 * The job queues' per-account caps (shared/http/job-handler.ts) stay below what each queue runs at
 * once, locally and deployed (functions/topology.ts): one busy account leaves workers to the others.
 */
import { describe, expect, it } from 'vitest';
import { functionByName } from '../../functions/topology.js';
import { erasureFairness } from '../../shared/erasures/worker.js';
import { exportFairness } from '../../shared/exports/worker.js';
import { importFairness } from '../../shared/imports/worker.js';
import { indexBuildFairness } from '../../shared/indexing/worker.js';

describe('job queues: per-account caps below the queue’s concurrency', () => {
  it.each([
    ['importWorker', importFairness.perAccount],
    ['exportWorker', exportFairness.perAccount],
    ['indexBuildWorker', indexBuildFairness.perAccount],
    ['erasureWorker', erasureFairness.perAccount],
  ] as const)('%s', (name, perAccount) => {
    const trigger = functionByName(name)!.trigger;
    if (trigger.kind !== 'queue') throw new Error(`${name} is not queue-fed`);
    expect(perAccount).toBeGreaterThanOrEqual(1);
    expect(perAccount).toBeLessThan(trigger.batchSize * trigger.maxConcurrency);
    expect(perAccount).toBeLessThan(trigger.local?.concurrency ?? trigger.batchSize * trigger.maxConcurrency);
  });
});
