/**
 * Local mode's stream poller (local/stream-poller.ts) sleeps while the table is quiet and is
 * woken by a write: every DynamoDB write the functions make through the data layer's client
 * (shared/db/client.ts `configureDbClient`, as local mode's fair gate is added; the SDK is not
 * patched) is announced on a process-wide BroadcastChannel, which reaches the poller in whichever
 * thread of the process it runs (`npm start` runs the workers in a thread of their own).
 *
 * Why: DynamoDB Local answers each GetRecords by scanning the stream records of every table it
 * holds, on its one SQLite thread. Three idle pollers at a 50 ms interval on an instance that had
 * streamed 20,000 items cost it 0.72–0.82 CPU-seconds a second, 0.08 at 1 s
 * (docs/performance.md, "The test suite"); woken by writes, a quiet poller can wait a second
 * without delaying a change. Writes from another process (an upgrade command, a test's own client)
 * are found by the idle poll within a second, or at once by `drain()`. Deployed, Lambda's event
 * source mapping polls the stream itself and nothing here exists.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { configureDbClient } from '../shared/db/client.js';

/** The channel's name: one per process (every thread of it). */
export const TABLE_WRITES_CHANNEL = 'crm-local-table-writes';

/** The write commands whose success may add stream records. */
const WRITES = /^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems|ExecuteStatement|BatchExecuteStatement|ExecuteTransaction)Command$/;

let installed = false;

/** Announces each successful write of this thread's data-layer client on the channel (once per thread). */
export function installWriteSignal(): void {
  if (installed) return;
  installed = true;
  const channel = new BroadcastChannel(TABLE_WRITES_CHANNEL);
  channel.unref();
  configureDbClient((client) =>
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (WRITES.test(context.commandName ?? '')) channel.postMessage(0);
        return out;
      },
      { step: 'initialize', name: 'localWriteSignal' },
    ),
  );
}

/** Calls `wake` whenever a thread of this process announces a write; returns the unsubscribe. */
export function onTableWrites(wake: () => void): () => void {
  const channel = new BroadcastChannel(TABLE_WRITES_CHANNEL);
  channel.unref();
  channel.onmessage = () => wake();
  return () => channel.close();
}
