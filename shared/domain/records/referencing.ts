import type { Change } from '../../db/record-store.js';
import { ENTITIES, type EntityDefinition, refFields } from '../../schemas/entities/index.js';

export type Reference = { entity: EntityDefinition; ref: ReturnType<typeof refFields>[number] };

/** Every reference field of every entity, by the entity type it points at (derived once from the entity list). */
const REFERENCES = new Map<string, Reference[]>();
for (const e of ENTITIES) {
  for (const ref of refFields(e as EntityDefinition)) REFERENCES.set(ref.target, [...(REFERENCES.get(ref.target) ?? []), { entity: e as EntityDefinition, ref }]);
}

/** Every reference field of every entity that points at `target`. */
export const referencesTo = (target: string): Reference[] => REFERENCES.get(target) ?? [];

/**
 * The change that makes a record's link to `from` (its field `ref`) a link to `to` (its id and
 * current name), or drops it (`to` null: a single reference becomes null, the id leaves an id
 * array); undefined when the record does not link `from`.
 */
export function relink(ref: Reference['ref'], current: Record<string, unknown>, from: string, to: { id: string; name: string } | null): Change | undefined {
  const value = current[ref.field];
  if (ref.many) {
    const ids = Array.isArray(value) ? (value as string[]) : [];
    if (!ids.includes(from)) return undefined;
    return { set: { [ref.field]: to ? [...new Set(ids.map((x) => (x === from ? to.id : x)))] : ids.filter((x) => x !== from) } };
  }
  if (value !== from) return undefined;
  if (!to) return { set: { [ref.field]: null, ...(ref.nameField ? { [ref.nameField]: '' } : {}) } };
  return { set: { [ref.field]: to.id, ...(ref.nameField ? { [ref.nameField]: to.name } : {}) } };
}

/** Runs `fn` over `items`, at most `n` at once. */
export async function inParallel<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}
