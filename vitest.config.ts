import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup-file.ts'],
    // A test that waits on a signal fails at once when the signal comes wrong; the limit only bounds a hang, with room for a loaded 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Longest files first (test/helpers/durations.json), so the two workers finish together.
    sequence: { sequencer: LongestFirst },
    // The Lambda bundles tests build (test/helpers/deployed.ts, deployed-bundles.test.ts) load as Lambda loads
    // them, with Node's own import: not transformed and source-mapped again by Vite.
    server: { deps: { external: [/[\\/]crm-(deployed|bundle)-[^\\/]+[\\/]/] } },
  },
});
