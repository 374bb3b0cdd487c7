/**
 * The shape of the operation registry (functions/operations.ts) and its entries, derived from
 * the resource definitions (shared/schemas/resource.ts): one entry per operation of a family,
 * its handler in `functions/<prefix>/<verb>.ts`.
 */
import type { Bindings } from '../config/bindings.js';
import type { Family } from '../errors.js';
import type { ItemUse } from '../schemas/policies.js';
import { type Access, operationName, type ResourceDefinition } from '../schemas/resource.js';

export type { Access };

export interface OperationEntry {
  /** `POST /api/<name>` */
  name: string;
  family: Family;
  /** Handler module, relative to functions/, exporting `handler`. */
  entry: string;
  access: Access;
  /**
   * What the function may touch beyond the table (whose mode is `access`): each binding sets its
   * environment variable and its grant (shared/config/bindings.ts; lib/bindings.ts; local/resources.ts).
   */
  bindings?: Omit<Bindings, 'table'>;
  /** Writes idempotency records (the declaration's `idempotent`). */
  idempotent?: true;
  /** Items beyond records it reads or writes (the declaration's `items`). */
  items?: ItemUse;
}

/** The registry entries of a family: one per operation of its resource definition. */
export const registryEntries = (def: ResourceDefinition): OperationEntry[] =>
  Object.entries(def.operations).map(([verb, op]) => ({
    name: operationName(def, verb),
    family: def.family,
    entry: `${def.prefix}/${verb}.ts`,
    access: op.access,
    ...(op.bindings ? { bindings: op.bindings } : {}),
    ...(op.idempotent ? { idempotent: op.idempotent } : {}),
    ...(op.items ? { items: op.items } : {}),
  }));
