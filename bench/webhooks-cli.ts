/**
 * `npm run bench:webhooks -- [events=100] [writes-per-second=10]`: webhook delivery latency of the
 * local stack alone (write request start → verified receipt at a 127.0.0.1 receiver).
 */
import { startLocalStack } from '../local/runtime.js';
import { benchWebhooks } from './webhooks.js';

process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
const [events = 100, rate = 10] = process.argv.slice(2).map(Number);
const stack = await startLocalStack({ port: 0, tableName: `webhooks-bench-${Date.now()}` });
try {
  console.log(JSON.stringify(await benchWebhooks(stack, events, rate), null, 2));
} finally {
  await stack.stop();
}
process.exit(0);
