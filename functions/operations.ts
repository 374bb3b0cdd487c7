/**
 * The operation registry: one line per API operation. The CDK stack creates one route and one
 * Lambda per entry, and the local runner serves the same entries; neither imports handlers
 * directly. Adding an operation = its handler file + its line here + its test.
 *
 * access: 'read' functions get read-only table grants; 'write' functions read and write.
 */
import type { Family } from '../shared/errors.js';

export type Access = 'read' | 'write';

export interface OperationEntry {
  /** `POST /api/<name>` */
  name: string;
  family: Family;
  /** Handler module, relative to functions/, exporting `handler`. */
  entry: string;
  access: Access;
  /** Extra permissions beyond the table (used by the stack). */
  needs?: ReadonlyArray<'queue' | 'secrets-key' | 'secrets-open'>;
}

const crud = (family: Family, prefix: string, dir: string): OperationEntry[] => [
  { name: `${prefix}-list`, family, entry: `${dir}/list.ts`, access: 'read' },
  { name: `${prefix}-get`, family, entry: `${dir}/get.ts`, access: 'read' },
  { name: `${prefix}-create`, family, entry: `${dir}/create.ts`, access: 'write' },
  { name: `${prefix}-update`, family, entry: `${dir}/update.ts`, access: 'write' },
  { name: `${prefix}-delete`, family, entry: `${dir}/delete.ts`, access: 'write' },
];

export const operations: readonly OperationEntry[] = [
  ...crud('companies', 'companies', 'companies'),
  ...crud('contacts', 'contacts', 'contacts'),
  ...crud('custom_fields', 'custom-fields', 'custom-fields'),
  ...crud('sources', 'sources', 'sources'),
  { name: 'webhooks-create', family: 'webhooks', entry: 'webhooks/create.ts', access: 'write', needs: ['secrets-key', 'secrets-open'] },
  { name: 'webhooks-list', family: 'webhooks', entry: 'webhooks/list.ts', access: 'read' },
  { name: 'webhooks-get', family: 'webhooks', entry: 'webhooks/get.ts', access: 'read' },
  { name: 'webhooks-update', family: 'webhooks', entry: 'webhooks/update.ts', access: 'write', needs: ['secrets-key'] },
  { name: 'webhooks-delete', family: 'webhooks', entry: 'webhooks/delete.ts', access: 'write' },
  { name: 'webhooks-deliveries', family: 'webhooks', entry: 'webhooks/deliveries.ts', access: 'read' },
];

/** Functions that are not API routes: the authorizer, the fallback route, and the workers. */
export const internalFunctions = {
  authorizer: { entry: 'authorizer.ts', access: 'read' as Access },
  fallback: { entry: 'fallback.ts', access: 'read' as Access },
  stream: { entry: 'stream/handler.ts', access: 'write' as Access },
  delivery: { entry: 'delivery/handler.ts', access: 'write' as Access },
} as const;

export const operationByName = new Map(operations.map((op) => [op.name, op]));
