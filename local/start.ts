/**
 * `npm start`: the whole service on this machine. See README "Local mode".
 */
import { optionalEnv } from '../shared/config/env.js';
import { docsRoutes } from './docs-routes.js';
import { startLocalStack } from './runtime.js';

const port = Number(optionalEnv('PORT') ?? 3000);
const stack = await startLocalStack({
  port,
  dataDir: optionalEnv('CRM_DATA_DIR'),
  devTokens: optionalEnv('CRM_DEV_TOKENS'),
  routes: docsRoutes(),
  onStreamError: (e) => console.error('stream worker error:', e),
  onQueueError: (e) => console.error('delivery worker error:', e),
});

console.log(`CRM API ready at ${stack.baseUrl}/api/<operation>`);
console.log(`API reference at ${stack.baseUrl}/docs (OpenAPI document: ${stack.baseUrl}/openapi.json)`);
console.log(`DynamoDB Local at ${stack.dynamoEndpoint} (table ${stack.tableName}${optionalEnv('CRM_DATA_DIR') ? `, data in ${optionalEnv('CRM_DATA_DIR')}` : ', in memory'})`);
console.log(`webhook delivery queue at ${stack.deliveryQueueUrl} (see docs/webhooks.md)`);
for (const t of stack.tokens) console.log(`token for account ${t.accountId} (user ${t.userId}): ${t.token}`);
console.log(`try: curl -s -X POST ${stack.baseUrl}/api/contacts-list -H 'Authorization: Bearer ${stack.tokens[0]?.token}' -H 'Content-Type: application/json' -d '{}'`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping…`);
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
