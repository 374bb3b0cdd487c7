/**
 * DynamoDB serves each partition on its own, so one account's burst never queues another
 * account's calls; DynamoDB Local serves every call of every account on one SQLite thread, in
 * arrival order. A quiet account's call would wait behind every call a bulk-writing account has in
 * flight (hundreds, during a batch create beside its stream work). So, in local mode, this
 * process's DynamoDB calls pass a gate, a middleware on the functions' DynamoDB client (added
 * where the client is built, shared/db/client.ts `configureDbClient`; the SDK is not patched): at most `CALLS` in flight, and while another account
 * waits, an account gets no new slot beyond `CALLS_PER_ACCOUNT`; freed slots go to the waiting
 * accounts in turn (`FairSlots`, as the changes worker shares its items). An account alone keeps
 * every slot. The account is the first `A#<id>` key part of the call; calls without one
 * (tokens, installation items) are a group of their own. A call made while the same async
 * context holds a slot passes. Deployed, nothing is added:
 * this is local mode's stand-in for DynamoDB's partitions (docs/performance.md, "Fairness").
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { FairSlots } from '../shared/fair-slots.js';
import { configureDbClient } from '../shared/db/client.js';
import { keys } from '../shared/db/table.js';

const CALLS = 4;
const CALLS_PER_ACCOUNT = 2;

/** What every account-scoped key starts with (`A#`: the account's own item's key, with no account). */
const ACCOUNT_PREFIX = keys.accountMeta('').pk;

/** The account a call addresses: the first account-scoped key (`A#<id>…`) among its keys and values (depth-limited walk). */
export function accountOfCall(input: unknown, depth = 0): string | undefined {
  if (typeof input === 'string') return input.startsWith(ACCOUNT_PREFIX) ? input.slice(ACCOUNT_PREFIX.length, input.indexOf('#', ACCOUNT_PREFIX.length) >>> 0) : undefined;
  if (!input || typeof input !== 'object' || depth > 6) return undefined;
  for (const value of Array.isArray(input) ? input.slice(0, 2) : Object.values(input)) {
    const found = accountOfCall(value, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

const holding = new AsyncLocalStorage<true>();

/** Runs `call` once `gate` gives the account of `input` a slot (at once when this async context holds one). */
export async function throughGate<R>(gate: FairSlots, input: unknown, call: () => Promise<R>): Promise<R> {
  if (holding.getStore()) return call();
  const release = await gate.acquire(accountOfCall(input) ?? '');
  try {
    return await holding.run(true, call);
  } finally {
    release();
  }
}

let installed = false;

/** Adds the gate to the middleware stack of the DynamoDB client the functions use (shared/db/client.ts), once. */
export function installFairGate(): void {
  if (installed) return;
  installed = true;
  const gate = new FairSlots(CALLS, CALLS_PER_ACCOUNT);
  // Outermost (initialize, high): a call holds its slot through its retries and the durability barrier's read.
  configureDbClient((client) =>
    client.middlewareStack.add((next) => (args) => throughGate(gate, args.input, () => next(args)), { step: 'initialize', priority: 'high', name: 'localFairGate' }),
  );
}
