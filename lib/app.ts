import type { App } from 'aws-cdk-lib';
import { CrmStack } from './crm-stack.js';
import { acknowledgeCdkInternals } from './nag.js';
import type { FunctionSpec } from '../functions/topology.js';
import type { StageConfig } from './stage.js';

/**
 * Every stack of the service for one stage. bin/app.ts (cdk synth/deploy) and the CDK tests
 * (test/cdk/*: assertions, cdk-nag) build the app through this one function, so the tests check
 * exactly what gets deployed. Add new stacks here, not in bin/app.ts.
 */
export function buildCrmApp(app: App, stage: StageConfig, env?: { account: string; region: string }, opts: { topology?: readonly FunctionSpec[] } = {}): { stack: CrmStack } {
  const stack = new CrmStack(app, `CrmService-${stage.name}`, {
    stage,
    description: `CRM service (${stage.name}): HTTP API, Lambda per operation, DynamoDB, stream, webhook delivery`,
    env,
    topology: opts.topology,
  });
  acknowledgeCdkInternals(stack);
  return { stack };
}
