/**
 * Documentation routes of the local server (`npm start`):
 *
 * - `GET /openapi.json`: the OpenAPI 3.1 document, generated at start from the registry and the
 *   valibot schemas (shared/openapi/), with this server as its `servers` entry.
 * - `GET /docs`: a human-readable reference (Swagger UI), its assets served from the
 *   `swagger-ui-dist` package in node_modules: nothing is loaded from a CDN.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { buildOpenApiDocument, type OpenApiDocument } from '../shared/openapi/document.js';
import { operations } from '../functions/operations.js';
import type { StaticRoute } from './server.js';

const ASSET_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files of the package that are served, with their content types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * The families in the order of the README's "Operations" table (test/integration/docs-page.test.ts
 * checks it); families not named here follow in the registry's order.
 */
export const FAMILY_ORDER = ['contacts', 'companies', 'sources', 'custom_fields', 'projects', 'activities', 'webhooks', 'imports', 'exports', 'inbound_emails', 'api_keys', 'events', 'trash'];

/** The document with its tags (Swagger UI's sections) in FAMILY_ORDER. */
export function orderedTags(doc: OpenApiDocument): OpenApiDocument {
  const rank = (name: string) => (FAMILY_ORDER.includes(name) ? FAMILY_ORDER.indexOf(name) : FAMILY_ORDER.length);
  const tags = ((doc.tags ?? []) as Array<{ name: string }>).map((tag, i) => ({ tag, i })).sort((a, b) => rank(a.tag.name) - rank(b.tag.name) || a.i - b.i).map(({ tag }) => tag);
  return { ...doc, tags };
}

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>CRM API reference</title>
    <link rel="stylesheet" type="text/css" href="/docs/assets/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/assets/index.css" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32" />
    <style>
      #token-help { max-width: 1460px; margin: 16px auto 0; padding: 0 20px; font-family: sans-serif; font-size: 14px; line-height: 1.5; }
      #token-help code { background: #f0f0f0; padding: 1px 4px; border-radius: 3px; }
    </style>
  </head>
  <body>
    <section id="token-help">
      <strong>Getting a token.</strong> Every operation needs <code>Authorization: Bearer &lt;token&gt;</code>:
      press <em>Authorize</em> below and paste one of these:
      <ul>
        <li>the token <code>npm start</code> printed when it got ready (<code>token for account …: crm_…</code>;
          the same across restarts with <code>CRM_DATA_DIR</code>);</li>
        <li>a new key from <code>npm run token -- create --account &lt;uuid&gt; --user &lt;uuid&gt;</code>
          (it finds this running server by itself);</li>
        <li>a narrower key made with the <code>api-keys-create</code> operation (scope <code>api_keys:manage</code>).</li>
      </ul>
      Every operation is <code>POST /api/&lt;operation&gt;</code> with a JSON object body; the families below follow
      the README's table.
    </section>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/init.js" charset="UTF-8"></script>
  </body>
</html>
`;

// BaseLayout: the reference without Swagger UI's top bar (an explorer box for other documents' URLs).
const INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

function reply(res: ServerResponse, status: number, contentType: string, body: string | Buffer, cache = 'no-cache') {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': cache, 'x-content-type-options': 'nosniff' });
  res.end(body);
}

export function docsRoutes(): StaticRoute[] {
  let doc: OpenApiDocument | undefined;
  const route: StaticRoute = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/openapi.json') {
      doc ??= orderedTags(buildOpenApiDocument(operations));
      const host = req.headers.host;
      const body = host ? { ...doc, servers: [{ url: `http://${host}`, description: 'this server' }] } : doc;
      reply(res, 200, 'application/json; charset=utf-8', JSON.stringify(body, null, 2));
      return true;
    }
    if (path === '/docs' || path === '/docs/') {
      reply(res, 200, 'text/html; charset=utf-8', PAGE);
      return true;
    }
    if (path === '/docs/init.js') {
      reply(res, 200, 'text/javascript; charset=utf-8', INIT);
      return true;
    }
    const asset = /^\/docs\/assets\/([^/]+)$/.exec(path)?.[1];
    if (asset !== undefined && Object.hasOwn(ASSETS, asset)) {
      reply(res, 200, ASSETS[asset]!, await readFile(join(ASSET_DIR, asset)), 'public, max-age=3600');
      return true;
    }
    return false;
  };
  return [route];
}
