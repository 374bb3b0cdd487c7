/**
 * Issue 24, "The first hour" 7: the local `/docs` page says how to get a token, lists the
 * families in the README's table order, and has no Swagger UI top bar (explorer box).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../functions/operations.js';
import { docsRoutes } from '../../local/docs-routes.js';
import { createApiServer } from '../../local/server.js';

/** The families of the README's "## Operations" table, in its order (each row's first operation names it). */
function readmeFamilies(): string[] {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('## Operations'), readme.indexOf('## Quick start'));
  return [...table.matchAll(/^\| [^|]+ \| `([a-z-]+)`/gm)].map(([, op]) => {
    const entry = operations.find((o) => o.name === op);
    if (!entry) throw new Error(`README names ${op}, which the registry does not have`);
    return entry.family;
  });
}

let server: Server;
let base: string;
beforeAll(async () => {
  server = createApiServer(docsRoutes());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('/docs', () => {
  it('says how to get a token', async () => {
    const html = await (await fetch(`${base}/docs`)).text();
    for (const way of ['npm start', 'npm run token', 'api-keys-create', 'Authorize']) expect(html).toContain(way);
  });

  it('lists the families in the README table order', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { tags: { name: string }[] };
    const families = readmeFamilies();
    expect(families.length).toBeGreaterThanOrEqual(11);
    // Every family of the README, in its order, first; anything else after.
    expect(doc.tags.map((t) => t.name).slice(0, families.length)).toEqual(families);
  });

  it('uses the base layout: no top bar (explorer box) and no standalone preset', async () => {
    const html = await (await fetch(`${base}/docs`)).text();
    const init = await (await fetch(`${base}/docs/init.js`)).text();
    expect(init).toContain("layout: 'BaseLayout'");
    expect(init).not.toMatch(/StandaloneLayout|StandalonePreset|Topbar/);
    expect(html).not.toContain('standalone-preset');
  });
});
