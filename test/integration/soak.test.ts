/**
 * `npm run soak` against its own `npm start` (test/helpers/local-service.ts): a short mixed
 * workload from four accounts (one bulk-writing), then the soak's own checks (every acknowledged
 * write in the change log, search and the subscribed webhook endpoints, nothing missing, nothing
 * extra: scripts/soak/check.ts). The test waits on the soak's exit and holds it to exit code 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crash, type Service, startService } from '../helpers/local-service.js';

const REPO = join(import.meta.dirname, '..', '..');
/** The test process's own table settings must not reach the soak (it issues keys in the service's table, named by the state file). */
const OWN = ['TABLE_NAME', 'CONTROL_TABLE_NAME', 'DYNAMODB_ENDPOINT', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'];

let service: Service | undefined;
beforeAll(async () => {
  // CRM_STATE_FILE (test/helpers/setup-file.ts) is inherited: the service writes its state there and the soak reads it.
  service = await startService();
}, 120_000);
afterAll(async () => {
  if (service && service.child.exitCode === null) await crash(service);
});

describe('npm run soak', () => {
  it('runs a mixed workload of four accounts for 1.5 minutes and finds nothing missing or extra', { timeout: 900_000 }, async () => {
    const smtpPort = /inbound email: smtp:\/\/127\.0\.0\.1:(\d+)/.exec(service!.output())?.[1];
    expect(smtpPort, service!.output()).toBeDefined();
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OWN.includes(k)));
    const child = spawn(join(REPO, 'node_modules', '.bin', 'tsx'), ['scripts/soak.ts', '--minutes', '1.5', '--accounts', '4', '--url', service!.baseUrl, '--token', service!.token, '--smtp-port', smtpPort!, '--max-wait', '300'], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, summary: output.split('\n').filter((l) => /^soak (PASSED|FAILED)|\[(api|events|log|webhooks|search|jobs)\]|note: inbound/.test(l)) }, output).toEqual({ code: 0, summary: [expect.stringMatching(/^soak PASSED/)] });
    // Every account wrote, and each kind of write happened.
    for (const op of ['contacts-batch-create', 'contacts-batch-upsert', 'contacts-merge', 'contacts-restore', 'imports-create', 'exports-create', 'erasures-create', 'inbound-email']) expect(output, op).toContain(`${op} `);
    expect(output).toMatch(/^a3 \(bulk\)\s+\d{3,}/m);
  });
});
