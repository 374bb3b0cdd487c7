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
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>CRM API reference</title>
    <link rel="stylesheet" type="text/css" href="/docs/assets/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/assets/index.css" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/assets/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/init.js" charset="UTF-8"></script>
  </body>
</html>
`;

const INIT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
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
      doc ??= buildOpenApiDocument(operations);
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
