/**
 * The shape of the operation registry (functions/operations.ts) and the CRUD entries every
 * entity gets from its definition.
 */
import type { Bindings } from '../config/bindings.js';
import type { Family } from '../errors.js';
import type { Entity } from '../schemas/entities/index.js';

export type Access = 'read' | 'write';

export interface OperationEntry {
  /** `POST /api/<name>` */
  name: string;
  family: Family;
  /** Handler module, relative to functions/, exporting `handler`. */
  entry: string;
  access: Access;
  /**
   * What the function may touch beyond the table (whose mode is `access`): each binding sets its
   * environment variable and its grant (shared/config/bindings.ts; lib/bindings.ts; local/runtime.ts).
   */
  bindings?: Omit<Bindings, 'table'>;
}

/** The five operations of an entity: `<prefix>-list/get/create/update/delete`, handlers in `functions/<prefix>/`. */
export const crud = (entity: Entity): OperationEntry[] => {
  const family = entity.family as Family;
  const p = entity.family;
  return [
    { name: `${p}-list`, family, entry: `${p}/list.ts`, access: 'read' },
    { name: `${p}-get`, family, entry: `${p}/get.ts`, access: 'read' },
    { name: `${p}-create`, family, entry: `${p}/create.ts`, access: 'write' },
    { name: `${p}-update`, family, entry: `${p}/update.ts`, access: 'write' },
    { name: `${p}-delete`, family, entry: `${p}/delete.ts`, access: 'write' },
  ];
};

/**
 * The batch operations of an entity (contract §13): `<prefix>-batch-create/-update/-delete/-get`,
 * and `-batch-upsert` when its definition has an exact lookup key (contacts: email, companies:
 * domain). Handlers in `functions/<prefix>/batch-<verb>.ts`.
 */
export const batch = (entity: Entity): OperationEntry[] => {
  const family = entity.family as Family;
  const p = entity.family;
  return [
    { name: `${p}-batch-create`, family, entry: `${p}/batch-create.ts`, access: 'write' },
    { name: `${p}-batch-update`, family, entry: `${p}/batch-update.ts`, access: 'write' },
    { name: `${p}-batch-delete`, family, entry: `${p}/batch-delete.ts`, access: 'write' },
    { name: `${p}-batch-get`, family, entry: `${p}/batch-get.ts`, access: 'read' },
    ...('lookup' in entity && entity.lookup ? [{ name: `${p}-batch-upsert`, family, entry: `${p}/batch-upsert.ts`, access: 'write' as const }] : []),
  ];
};

// --- trash, restore and merge (contract §15) ---
/**
 * `<prefix>-restore` for an entity whose deletions go to the trash, and `<prefix>-merge` for one
 * whose duplicates merge (flags `trash` / `merge` of its definition). Handlers in
 * `functions/<prefix>/restore.ts`, `merge.ts`.
 */
export const trash = (entity: Entity): OperationEntry[] => {
  const family = entity.family as Family;
  const p = entity.family;
  return [
    ...('trash' in entity && entity.trash ? [{ name: `${p}-restore`, family, entry: `${p}/restore.ts`, access: 'write' as const }] : []),
    ...('merge' in entity && entity.merge ? [{ name: `${p}-merge`, family, entry: `${p}/merge.ts`, access: 'write' as const }] : []),
  ];
};
// --- end trash ---
