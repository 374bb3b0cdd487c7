import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** ESM needs `require` for the few CommonJS dependencies esbuild keeps as require() calls. */
export const ESM_REQUIRE_SHIM = "import{createRequire as __crmCreateRequire}from'node:module';const require=__crmCreateRequire(import.meta.url);";

/**
 * esbuild settings of every Lambda bundle, shared by the stack (NodejsFunction) and the
 * benchmark, so the sizes and init times it reports are those of what gets deployed.
 */
export const LAMBDA_BUNDLE = {
  format: 'esm',
  target: 'node22',
  platform: 'node',
  minify: true,
  // Resolve the ESM builds of dependencies first: better tree shaking, smaller bundles.
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_SHIM,
  // The only "legal" comments the dependencies carry are coverage hints marked @preserve
  // (Powertools' `v8 ignore ... -- @preserve`), which esbuild would append to every bundle.
  legalComments: 'none',
  alias: {
    // Lambda's credentials are always in the environment: lib/lambda-credentials.ts.
    '@aws-sdk/credential-provider-node': path.join(here, 'lambda-credentials.ts'),
    // No call of the service uses an event stream: lib/sdk-event-streams.ts (~15 KB per function).
    '@smithy/core/event-streams': path.join(here, 'sdk-event-streams.ts'),
    // The pure-JavaScript SHA-256 (MD5, CRC32) is only a fallback for a runtime without node:crypto's
    // (node:zlib's), which Lambda's Node.js 22 always has: lib/sdk-checksum.ts (~3.4 KB per function).
    '@smithy/core/checksum': path.join(here, 'sdk-checksum.ts'),
    // No DynamoDB command discovers endpoints: lib/sdk-endpoint-discovery.ts (~9 KB per function).
    '@aws-sdk/middleware-endpoint-discovery': path.join(here, 'sdk-endpoint-discovery.ts'),
    // Idempotency's expressions are field paths: lib/jmespath-fields.ts (~23 KB per idempotent create).
    '@aws-lambda-powertools/jmespath': path.join(here, 'jmespath-fields.ts'),
    '@aws-lambda-powertools/jmespath/functions': path.join(here, 'jmespath-fields.ts'),
  },
} as const;
