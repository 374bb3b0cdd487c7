/**
 * The client stands alone (issue 18): its generated types match the OpenAPI document, and the
 * package, packed as a tarball and installed into a project outside this repository, calls the
 * local server with no import of the server's code.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedClientFiles } from '../../scripts/client-files.js';
import { startServer, type TestServer } from '../helpers/api.js';

const root = join(import.meta.dirname, '..', '..');
let server: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'crm-client-package-'));
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the client package (client/)', () => {
  it('has generated files that match the OpenAPI document (npm run client:generate)', async () => {
    for (const [name, text] of Object.entries(await generatedClientFiles())) {
      expect(readFileSync(join(root, 'client', 'generated', name), 'utf8'), `client/generated/${name} is stale: run npm run client:generate`).toBe(text);
    }
  }, 120_000);

  it('imports nothing of the server', () => {
    for (const file of ['index.ts', 'errors.ts', 'webhooks.ts']) {
      const text = readFileSync(join(root, 'client', file), 'utf8');
      expect(text, file).not.toMatch(/from '\.\.\//);
    }
  });

  it('installs from a packed tarball into another project and calls the local server', async () => {
    const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error', npm_config_fund: 'false', npm_config_audit: 'false' } });
    npm(['pack', '--pack-destination', dir], join(root, 'client'));
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    expect(tarball).toMatch(/^crm-client-.*\.tgz$/);
    const project = join(dir, 'app');
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    npm(['install', '--prefer-offline', join(dir, tarball)], project);
    writeFileSync(
      join(project, 'use.mjs'),
      `import { createClient, CrmError } from '@crm/client';
const crm = createClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN });
const contact = await crm.contacts.create({ first_name: 'Packed', email: 'packed@example.com' });
const got = await crm.contacts.get({ id: contact.id });
let error;
try { await crm.contacts.get({ id: '00000000-0000-4000-8000-000000000000' }); } catch (e) { error = e; }
const page = await crm.contacts.list({ limit: 1 });
console.log(JSON.stringify({ name: got.first_name, code: error.code, isCrmError: error instanceof CrmError, requestId: typeof error.requestId, paged: Array.isArray(page.items) }));
`,
    );
    // Asynchronous: the server answering it runs in this process.
    const { stdout: out } = await promisify(execFile)(process.execPath, ['use.mjs'], { cwd: project, encoding: 'utf8', env: { ...process.env, BASE_URL: server.baseUrl, TOKEN: server.token } });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ name: 'Packed', code: 'contacts.not_found', isCrmError: true, requestId: 'string', paged: true });
  }, 240_000);
});
