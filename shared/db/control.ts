/**
 * The control table: the items nothing reacts to. Items written per request that are not records
 * (the rate-limit bucket, API key use, idempotency records) and the items the changes worker
 * derives from the records' stream (search entries and their counters: shared/db/search.ts; the
 * change log: shared/db/events.ts). It has no stream, so these writes invoke nothing and are no
 * stream records for the stream's reader to pass; it has no index. Same key attributes and expiry
 * attribute as the table (shared/db/table.ts).
 */
import { requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { keySchemaOf, TABLE_DEFINITION } from './table.js';

export const CONTROL_TABLE_DEFINITION = {
  partitionKey: TABLE_DEFINITION.partitionKey,
  sortKey: TABLE_DEFINITION.sortKey,
  ttlAttribute: TABLE_DEFINITION.ttlAttribute,
} as const;

/** Parameters for CreateTable (local runner, tests); the stack maps the same fields. */
export function createControlTableInput(tableName: string) {
  return { TableName: tableName, BillingMode: 'PAY_PER_REQUEST' as const, ...keySchemaOf(CONTROL_TABLE_DEFINITION.partitionKey, CONTROL_TABLE_DEFINITION.sortKey) };
}

/** The control table's name for a table's (local mode and tests: `<table>-control`). */
export const controlTableNameFor = (tableName: string): string => `${tableName}-control`;

export function controlTableName(): string {
  return requireEnv(bindingEnv('control'));
}
