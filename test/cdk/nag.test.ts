import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it, vi } from 'vitest';

interface Finding {
  plugin: string;
  rule: string;
  severity: string;
  path: string;
}

/**
 * Synthesizes an app with cdk-nag v3's AwsSolutions and Serverless packs as CDK validation
 * plugins and returns every finding that was not acknowledged (lib/nag.ts, lib/api-function.ts).
 */
function nagFindings(build: (app: App) => void): Finding[] {
  const outdir = mkdtempSync(join(tmpdir(), 'crm-nag-'));
  // CDK prints the report when validation fails; the findings are asserted below instead.
  const quiet = [vi.spyOn(console, 'error').mockImplementation(() => undefined), vi.spyOn(console, 'log').mockImplementation(() => undefined)];
  try {
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    build(app);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
    try {
      app.synth();
    } catch (error) {
      if (!/ValidationFailed|Validation failed/.test(String(error))) throw error;
    }
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: { ruleName: string; severity: string; violatingConstructs?: { constructPath: string }[] }[] }[];
    };
    return report.pluginReports.flatMap((plugin) =>
      plugin.violations.flatMap((v) => (v.violatingConstructs ?? [{ constructPath: '?' }]).map((c) => ({ plugin: plugin.pluginName, rule: v.ruleName, severity: v.severity, path: c.constructPath }))),
    );
  } finally {
    for (const spy of quiet) spy.mockRestore();
    rmSync(outdir, { recursive: true, force: true });
  }
}

// The whole app's dev and prod stages are checked with both packs in test/cdk/stack.test.ts, on
// the synthesis its template tests read (one synthesis per stage for both).
describe('cdk-nag (AwsSolutions + Serverless)', () => {
  it('reports a finding that is not acknowledged (the check is live)', () => {
    const findings = nagFindings((app) => {
      new sqs.Queue(new Stack(app, 'Probe'), 'PlainQueue');
    });
    expect(findings.map((f) => f.rule)).toEqual(expect.arrayContaining(['AwsSolutions-SQS4', 'Serverless-SQSRedrivePolicy']));
  }, 60_000);
});
