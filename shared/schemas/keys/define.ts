/**
 * How a family declares its keys and index compositions (ElectroDB's `indexes`, as data): each
 * key is a template of literal parts and `{placeholders}`, and `shared/db/table.ts` derives the
 * key builders from these declarations (`deriveKeys`). Declarations are pure data: this folder
 * imports nothing at runtime, so the data layer takes them without any family's schemas.
 *
 * - `'A#{account}#wh'`: a partition (or any key string); a template without placeholders is a
 *   constant (`'IMPORTS#ACTIVE'`).
 * - `['A#{account}#wh', '{id}']`: a table key, `{ pk, sk }`.
 * - `{ gsi1: ['A#{account}#imp', '{createdAt}#{id}'] }`: GSI1 attributes, `{ gsi1pk, gsi1sk }`
 *   (`{ gsi2: … }`: GSI2's, `{ gsi2pk, gsi2sk }`).
 *
 * A builder takes its placeholders as arguments, in order of first appearance (partition key
 * first). `{name:N}` is a number, zero-padded to N digits so the sort key orders numerically;
 * `{type}` and `{target}` are entity types; every other placeholder is a string.
 */
import type { EntityType } from '../entities/index.js';

export type KeyTemplate = string;
export type KeyDeclaration =
  | KeyTemplate
  | readonly [pk: KeyTemplate, sk: KeyTemplate]
  | { readonly gsi1: readonly [pk: KeyTemplate, sk: KeyTemplate] }
  | { readonly gsi2: readonly [pk: KeyTemplate, sk: KeyTemplate] };
export type KeyDeclarations = Readonly<Record<string, KeyDeclaration>>;

/** Declares a family's keys (identity function that keeps the templates' literal types). */
export const defineKeys = <const K extends KeyDeclarations>(keys: K): K => keys;

type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? [P, ...Placeholders<Rest>] : [];
type Dedupe<T extends unknown[], Seen = never> = T extends [infer H, ...infer R] ? ([H] extends [Seen] ? Dedupe<R, Seen> : [H, ...Dedupe<R, Seen | H>]) : [];
type ArgOf<P> = P extends `${string}:${string}` ? number : P extends 'type' | 'target' ? EntityType : string;
type Args<Ps extends unknown[]> = { [I in keyof Ps]: ArgOf<Ps[I]> };
type Builder<Ps extends unknown[], R> = Ps extends [] ? R : (...args: Args<Ps>) => R;

/** The builder a declaration derives to. */
export type KeyBuilder<D> = D extends string
  ? Builder<Placeholders<D>, string>
  : D extends readonly [infer P extends string, infer S extends string]
    ? Builder<Dedupe<[...Placeholders<P>, ...Placeholders<S>]>, { pk: string; sk: string }>
    : D extends { readonly gsi1: readonly [infer P extends string, infer S extends string] }
      ? Builder<Dedupe<[...Placeholders<P>, ...Placeholders<S>]>, { gsi1pk: string; gsi1sk: string }>
      : D extends { readonly gsi2: readonly [infer P extends string, infer S extends string] }
        ? Builder<Dedupe<[...Placeholders<P>, ...Placeholders<S>]>, { gsi2pk: string; gsi2sk: string }>
        : never;

export type KeyBuilders<K extends KeyDeclarations> = { readonly [N in keyof K]: KeyBuilder<K[N]> };

/** The tenant: every key of account data starts with it (tenant isolation lives in the key). */
export const ACCOUNT = 'A#{account}';
/** Sort value shared by the GSI and every index entry: newest-first order is its reverse. */
export const ORDER = '{createdAt}#{id}';

/** The names of a declaration's item kinds: its table keys (`[pk, sk]`). */
export type ItemKinds<K extends KeyDeclarations> = { [N in keyof K]: K[N] extends readonly [string, string] ? N : never }[keyof K];

/**
 * Whether each item kind of a family holds record data (a person's data: contract §18). Every
 * table key of the declaration must say `true` or `false` (typecheck fails otherwise), and every
 * kind that says `true` must be reached by the erasure (`ERASURE_PATHS` in shared/erasures/paths.ts,
 * checked at compile time and by test/unit/erasure-paths.test.ts).
 */
export const personalFlags = <K extends KeyDeclarations, const F extends { readonly [N in ItemKinds<K>]: boolean }>(_keys: K, flags: F): F => flags;
