import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { LOCAL_AWS_ENV, QUICK_JIT, startDynamo } from '../../local/dynamo.js';

/**
 * One DynamoDB Local per test worker (`maxWorkers`); every test file creates its own table in
 * its worker's instance. DynamoDB Local runs its calls on one SQLite thread and answers every
 * stream call by scanning the stream records of every table it holds, so workers that share one
 * instance queue behind each other and slow as the run's tables pile up (docs/performance.md,
 * "The test suite").
 */
export default async function setup(project: TestProject) {
  // The suite's DynamoDB Locals (and those of the `npm start` its tests spawn) live for seconds to
  // minutes: the JVM's first-tier compiler alone costs a third less CPU than its full tiered
  // compilation on this 2-core machine, where the run is CPU-bound (docs/performance.md, "The test suite").
  process.env.CRM_DYNAMO_JVM_OPTS ??= QUICK_JIT;
  const workers = Math.max(1, Number(project.config.maxWorkers) || 1);
  const instances = await Promise.all(Array.from({ length: workers }, () => startDynamo()));
  Object.assign(process.env, LOCAL_AWS_ENV);
  project.provide('dynamoEndpoints', instances.map((d) => d.endpoint));
  // The first instance, for helpers written before there was one per worker.
  project.provide('dynamoEndpoint', instances[0]!.endpoint);
  // The run's Lambda bundles, built by the first file that needs them (test/helpers/deployed.ts, sharedDeployedBuild).
  // Named crm-deployed-…: vitest.config.ts leaves such files to Node's own import (not transformed by Vite).
  const bundlesDir = join(tmpdir(), `crm-deployed-${randomUUID()}`);
  project.provide('bundlesDir', bundlesDir);
  return async () => {
    await Promise.all(instances.map((d) => d.stop()));
    rmSync(bundlesDir, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    /** One DynamoDB Local per worker: a file uses `dynamoEndpoints[VITEST_POOL_ID - 1]` (test/helpers/setup-file.ts). */
    dynamoEndpoints: string[];
    /** Where the run's deployed bundles are built once (test/helpers/deployed.ts, sharedDeployedBuild); created by the first file that builds them. */
    bundlesDir: string;
  }
}
