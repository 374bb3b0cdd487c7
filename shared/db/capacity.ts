/**
 * What DynamoDB calls consume, measured by tests and the benchmark (`measureCapacity`): the
 * first measurement adds a middleware to the shared client (client.ts `configureDbClient`) that
 * asks every call made inside a measured scope for its consumed capacity. The functions never
 * import this module, so their bundles do not carry it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { billing, configureDbClient } from './client.js';

/** Capacity consumed by the DynamoDB calls made inside one `measureCapacity` scope. */
export interface CapacityUsage {
  rcu: number;
  wcu: number;
  /** Items DynamoDB read (Query/Scan ScannedCount, GetItem and BatchGetItem items). */
  itemsRead: number;
  calls: number;
  /** Write units as AWS bills TransactWriteItems (2 × each item's 1 KB units), estimated from item sizes. */
  transactWcuBilled: number;
}

const storage = new AsyncLocalStorage<CapacityUsage>();

/** True inside a measureCapacity scope: only then do calls ask DynamoDB for their consumed capacity. */
export const isMeasuring = () => storage.getStore() !== undefined;

let installed = false;

/** Adds the tracker to the shared client, once. */
function install(): void {
  if (installed) return;
  installed = true;
  billing.note = (op, ...images) => {
    if (isMeasuring()) billedItemSize.set(op, Math.max(...images.map(itemSize)));
  };
  configureDbClient((client) =>
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (!isMeasuring()) return next(args);
        const input = args.input as Record<string, unknown>;
        if (input && typeof input === 'object' && !('ReturnConsumedCapacity' in input)) input.ReturnConsumedCapacity = 'INDEXES';
        const out = await next(args);
        recordCapacity(context.commandName ?? '', input, { ...(out.output as object) });
        return out;
      },
      { step: 'initialize', name: 'consumedCapacity' },
    ),
  );
}

export async function measureCapacity<T>(fn: () => Promise<T>): Promise<{ result: T; usage: CapacityUsage }> {
  install();
  const usage: CapacityUsage = { rcu: 0, wcu: 0, itemsRead: 0, calls: 0, transactWcuBilled: 0 };
  const result = await storage.run(usage, fn);
  return { result, usage };
}

type Cap = { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };

function addCapacity(usage: CapacityUsage, cc: unknown, isWrite: boolean) {
  const list = Array.isArray(cc) ? cc : cc ? [cc] : [];
  for (const c of list as Array<Cap & { Table?: Cap; GlobalSecondaryIndexes?: Record<string, Cap> }>) {
    const total = c.CapacityUnits ?? 0;
    const reads = c.ReadCapacityUnits ?? 0;
    const writes = c.WriteCapacityUnits ?? 0;
    if (reads || writes) {
      usage.rcu += reads;
      usage.wcu += writes;
    } else if (isWrite) usage.wcu += total;
    else usage.rcu += total;
  }
}

/** Approximate DynamoDB item size: attribute names plus values, as AWS counts them. */
export function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).length / 2) + 1;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + itemSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + itemSize(v), 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value as Record<string, unknown>).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + itemSize(v), 0);
  }
  return 0;
}

/**
 * Sizes of items that a transaction updates or deletes, registered by the writer (the request
 * itself does not carry them), so billed write units can be estimated as AWS computes them.
 */
const billedItemSize = new WeakMap<object, number>();

const WRITE_COMMANDS = new Set([
  'PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand',
]);

function recordCapacity(commandName: string, input: Record<string, unknown>, output: Record<string, unknown> | undefined) {
  const usage = storage.getStore();
  if (!usage || !output) return;
  usage.calls += 1;
  addCapacity(usage, output.ConsumedCapacity, WRITE_COMMANDS.has(commandName));
  if ('ScannedCount' in output) usage.itemsRead += Number(output.ScannedCount ?? 0);
  else if (commandName === 'GetItemCommand' && output.Item) usage.itemsRead += 1;
  else if (commandName === 'BatchGetItemCommand' && output.Responses) {
    for (const items of Object.values(output.Responses as Record<string, unknown[]>)) usage.itemsRead += items.length;
  }
  if (commandName === 'TransactWriteItemsCommand' && Array.isArray(input.TransactItems)) {
    for (const t of input.TransactItems as Array<Record<string, { Item?: unknown }>>) {
      const op = Object.values(t)[0];
      // Puts are billed by their size; updates and deletes by the stored item's size when the
      // writer registered it, else 1 KB; condition checks by 1 unit each.
      const size = op?.Item ? itemSize(op.Item) : (op && billedItemSize.get(op)) ?? 1024;
      usage.transactWcuBilled += 2 * Math.max(1, Math.ceil(size / 1024));
    }
  }
}
