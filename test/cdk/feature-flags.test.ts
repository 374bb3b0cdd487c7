/**
 * `npx cdk synth` warns "N feature flags are not configured" for every flag of aws-cdk-lib whose
 * unconfigured behaviour differs from the recommended value. cdk.json configures each of them
 * (with the behaviour the stack was built and tested with: templates unchanged), so the warning
 * stays away after an aws-cdk-lib upgrade only if this test is kept green.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';

interface FlagInfo {
  userValue?: unknown;
  recommendedValue: unknown;
  unconfiguredBehavesLike?: { v2?: unknown };
}

describe('cdk.json feature flags', () => {
  it('configures every flag the CLI would report as not configured', () => {
    const cdkJson = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const outdir = mkdtempSync(join(tmpdir(), 'crm-flags-'));
    try {
      const app = new App({ outdir, context: cdkJson.context });
      new Stack(app, 'Empty');
      const manifest = app.synth().manifest;
      const report = manifest.artifacts?.['aws-cdk-lib/feature-flag-report']?.properties as { flags: Record<string, FlagInfo> } | undefined;
      expect(report, 'the feature-flag report of the cloud assembly').toBeDefined();
      const unconfigured = Object.entries(report!.flags)
        .filter(([, f]) => f.userValue === undefined && JSON.stringify(f.unconfiguredBehavesLike?.v2 ?? false) !== JSON.stringify(f.recommendedValue))
        .map(([name]) => name);
      expect(unconfigured).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
