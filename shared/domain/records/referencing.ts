import { ENTITIES, type EntityDefinition, refFields } from '../../schemas/entities/index.js';

export type Reference = { entity: EntityDefinition; ref: ReturnType<typeof refFields>[number] };

/** Every reference field of every entity, by the entity type it points at (derived once from the entity list). */
const REFERENCES = new Map<string, Reference[]>();
for (const e of ENTITIES) {
  for (const ref of refFields(e as EntityDefinition)) REFERENCES.set(ref.target, [...(REFERENCES.get(ref.target) ?? []), { entity: e as EntityDefinition, ref }]);
}

/** Every reference field of every entity that points at `target`. */
export const referencesTo = (target: string): Reference[] => REFERENCES.get(target) ?? [];

/** Runs `fn` over `items`, at most `n` at once. */
export async function inParallel<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}
