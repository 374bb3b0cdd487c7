/**
 * `npm run bench:events -- [sizes=10000,100000]`: RCU per `events-list` page of the local stack
 * alone (bench/events.ts), at each log size.
 */
import { startLocalStack } from '../local/runtime.js';
import { benchEvents } from './events.js';
import { table } from './stats.js';

process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
const sizes = (process.argv[2] ?? '10000').split(',').map(Number);
const stack = await startLocalStack({ port: 0, tableName: `events-bench-${Date.now()}` });
try {
  console.log(table(await benchEvents(sizes, (...a: unknown[]) => console.error('[bench]', ...a))));
} finally {
  await stack.stop();
}
process.exit(0);
