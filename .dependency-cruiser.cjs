/* global module */
/**
 * Layer rules (docs/architecture.md, "Layers"): folders import one way and a new cycle or a
 * forbidden import fails `npm run depcheck` (run by `.ci/run`).
 */
const layer = (name, forbidden, comment) => ({
  name: `${name}-imports-one-way`,
  comment,
  severity: 'error',
  from: { path: `^shared/${name}/` },
  to: { path: forbidden.map((f) => `^shared/${f}(/|\\.ts$)`), dependencyTypesNot: ['type-only'] },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No module-level import cycles.', from: {}, to: { circular: true } },
    {
      name: 'shared-is-below-the-app',
      severity: 'error',
      comment: 'Nothing in shared/ imports handlers, the stack, local mode, tools, tests or the client.',
      from: { path: '^shared/' },
      to: { path: '^(functions|lib|bin|local|scripts|bench|test|client)/' },
    },
    {
      name: 'handlers-are-thin',
      severity: 'error',
      comment: 'Handlers reach the data layer only through shared/http and shared/domain (the stream handler decodes table stream records with shared/db/changes.ts).',
      from: { path: '^functions/' },
      to: { path: '^shared/db/', pathNot: '^shared/db/changes\\.ts$' },
    },
    {
      name: 'storage-only-in-the-data-layer',
      severity: 'error',
      comment: 'DynamoDB, S3 and KMS (secrets at rest) calls live in shared/db/ (tools, local mode and tests may talk to the local services directly).',
      from: { path: '^(shared|functions)/', pathNot: '^shared/db/' },
      to: { path: '@aws-sdk/(lib-dynamodb|client-dynamodb|client-s3|client-kms|s3-request-presigner)|@aws-lambda-powertools/idempotency/dynamodb', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'key-declarations-are-data',
      severity: 'error',
      comment: 'Key declarations (shared/schemas/keys/) are pure data: they import only each other, so the data layer takes them without any family schema.',
      from: { path: '^shared/schemas/keys/' },
      to: { pathNot: '^shared/schemas/keys/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'keys-built-only-in-the-table-module',
      severity: 'error',
      comment: 'Key builders are derived in shared/db/table.ts; outside the resource definitions and tests, nothing reads the declarations directly.',
      from: { pathNot: '^(shared/db/table\\.ts|shared/schemas/|test/)' },
      to: { path: '^shared/schemas/keys/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'one-writer-of-records',
      severity: 'error',
      comment:
        'Records, their index entries, search entries and custom-field values are written only by the record store (shared/db/record-store.ts): ' +
        'nothing outside the data layer imports its low-level writes (writes.ts, bulk writes batch.ts, search entries search.ts).',
      from: { pathNot: '^shared/db/' },
      to: { path: '^shared/db/(writes|batch|search)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'record-writes-only-in-the-store',
      severity: 'error',
      comment: 'Inside the data layer, the record writes (writes.ts) are called by the record store and by the bulk create it uses (batch.ts) only.',
      from: { path: '^shared/db/', pathNot: '^shared/db/(record-store|batch)\\.ts$' },
      to: { path: '^shared/db/writes\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workers-reach-data-through-the-domain',
      severity: 'error',
      comment:
        'The import worker and the stream worker reach the data layer only through the domain services, as the API does ' +
        '(records: shared/domain/records/, shared/domain/batch.ts; import jobs and their files: shared/domain/imports.ts; the change log: shared/domain); from shared/db they import types only.',
      from: { path: '^shared/(imports|stream)/' },
      to: { path: '^shared/db/', dependencyTypesNot: ['type-only'] },
    },
    layer('schemas', ['db', 'domain', 'http', 'webhooks', 'stream', 'openapi', 'auth', 'imports', 'inbound', 'exports'], 'Schemas are pure declarations.'),
    layer('search', ['db', 'domain', 'http', 'webhooks', 'stream', 'openapi', 'schemas', 'auth'], 'Search text rules are pure.'),
    layer('net', ['db', 'domain', 'http', 'webhooks', 'stream', 'openapi', 'schemas', 'auth'], 'Address classification is pure.'),
    layer('observability', ['db', 'domain', 'http', 'webhooks', 'stream', 'openapi', 'schemas', 'auth', 'search', 'imports', 'inbound', 'exports'], 'Metrics and tracing import nothing of ours.'),
    layer('config', ['db', 'domain', 'http', 'webhooks', 'stream', 'openapi', 'schemas', 'auth', 'search'], 'Configuration is the bottom layer.'),
    layer('db', ['domain', 'indexing', 'http', 'webhooks', 'stream', 'openapi', 'auth', 'imports', 'inbound', 'exports'], 'The data layer knows keys and items, not the domain.'),
    layer('domain', ['indexing', 'http', 'webhooks', 'stream', 'openapi', 'imports', 'inbound', 'exports'], 'The domain is called by http, stream, webhooks, imports and inbound mail, never the reverse.'),
    layer('imports', ['http', 'webhooks', 'stream', 'openapi', 'inbound', 'exports'], 'Import jobs sit above the domain.'),
    // Export jobs reuse the import's column mapping (shared/imports/mapping.ts) and queue client: exports sit above imports.
    layer('exports', ['http', 'webhooks', 'stream', 'openapi', 'inbound'], 'Export jobs sit above the domain and the imports.'),
    // Index builds (contract §17) sit above the domain and use the imports' queue client and job recovery.
    layer('indexing', ['http', 'webhooks', 'stream', 'openapi', 'inbound', 'exports', 'erasures'], 'Index builds sit above the domain.'),
    layer('erasures', ['http', 'openapi'], 'Erasures sit above the stream, webhooks, imports, exports and inbound mail: they reach every copy.'),
    layer('inbound', ['http', 'webhooks', 'stream', 'openapi', 'imports', 'exports'], 'Inbound mail sits above the domain.'),
    layer('webhooks', ['http', 'stream', 'openapi'], 'Webhook runtime sits above the domain.'),
    layer('stream', ['http', 'openapi'], 'The stream worker sits above domain and webhooks.'),
    layer('http', ['stream', 'webhooks', 'openapi'], 'The operation pipeline does not know the workers.'),
    layer('openapi', ['db', 'stream', 'webhooks'], 'The document derives from declarations only.'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    exclude: { path: '^(node_modules|cdk\\.out|dist)' },
  },
};
