/**
 * The data layer's one expression module: the parameters of a request's expressions (condition,
 * update, key condition, filter, projection) built from plain values, with their placeholders
 * generated (deterministically: `#<attribute>` and `:<attribute>`, numbered on a clash) and
 * merged without collisions; the transaction that answers which item refused it; the item of a
 * stored item (its keys left out); a page of `limit` read as `limit + 1`.
 *
 * Every builder returns an `Expr`, the request fields themselves: spread it into a command's input
 * (`{ TableName, Key, ...update({ set }, exists()) }`), or combine several with `merge`.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from './client.js';
import { TABLE_DEFINITION } from './table.js';

type Names = Record<string, string>;
type Values = Record<string, unknown>;
type Clause = 'Condition' | 'Update' | 'KeyCondition' | 'Filter' | 'Projection';

/** Expression fields of a request (each `<Clause>Expression`), with the names and values they use. */
export type Expr = { [C in `${Clause}Expression`]?: string } & { ExpressionAttributeNames?: Names; ExpressionAttributeValues?: Values };

/** An update's parameters (a request of UpdateItem, or a transaction's Update, needs its expression). */
export type UpdateExpr = Expr & Required<Pick<Expr, 'UpdateExpression'>>;

/** A condition's parameters (a transaction's ConditionCheck needs its expression). */
export type Condition = Expr & Required<Pick<Expr, 'ConditionExpression'>>;

/** A part to merge, or nothing (a falsy value: `after && sortKey(…)`). */
type Maybe = Expr | false | '' | null | undefined;

/** An attribute, or a path into a map attribute (`['custom_fields', id]`). */
export type Path = string | readonly string[];

const CLAUSES: readonly Clause[] = ['Condition', 'KeyCondition', 'Filter', 'Projection', 'Update'];
const field = (c: Clause) => `${c}Expression` as const;
const PLACEHOLDER = /[#:][A-Za-z0-9_]+/g;
const token = (s: string) => s.replace(/[^A-Za-z0-9_]/g, '_') || '_';

/** Expressions joined as one (a term with an OR, or an AND in an OR, parenthesized). */
function joined(terms: string[], op: 'AND' | 'OR'): string {
  const loose = op === 'AND' ? /\bOR\b/ : /\b(AND|OR)\b/;
  return terms.length === 1 ? terms[0]! : terms.map((t) => (loose.test(t) ? `(${t})` : t)).join(` ${op} `);
}

/**
 * Adds a part's names and values to `into`, renaming the part's placeholders that another part
 * uses for another name or value (`:a` → `:a2`); returns the part's texts with the renames made.
 */
function absorb(into: { names: Names; values: Values }, names: Names = {}, values: Values = {}, texts: string[]): string[] {
  const renames = new Map<string, string>();
  for (const [table, own] of [
    [into.names, names],
    [into.values, values],
  ] as [Values, Values][]) {
    for (const [key, v] of Object.entries(own)) {
      let k = key;
      for (let n = 2; (k in table && !Object.is(table[k], v)) || (k !== key && k in own); n++) k = `${key}${n}`;
      table[k] = v;
      if (k !== key) renames.set(key, k);
    }
  }
  return renames.size ? texts.map((t) => t.replace(PLACEHOLDER, (m) => renames.get(m) ?? m)) : texts;
}

/** A condition's text moved to another clause. */
function relabel({ ConditionExpression: text, ...rest }: Expr, to: Clause): Expr {
  return { [field(to)]: text, ...rest };
}

const finish = (out: Expr, bag: { names: Names; values: Values }): Expr => {
  if (Object.keys(bag.names).length) out.ExpressionAttributeNames = bag.names;
  if (Object.keys(bag.values).length) out.ExpressionAttributeValues = bag.values;
  return out;
};

/**
 * Several parts as one request's parameters: conditions, key conditions and filters are ANDed,
 * projections listed; names and values merged, a clashing placeholder renamed. At most one part
 * may carry an update. Falsy parts are skipped.
 */
export function merge(...parts: Maybe[]): Expr {
  const bag = { names: {}, values: {} };
  const texts = new Map<Clause, string[]>();
  for (const part of parts) {
    if (!part) continue;
    const present = CLAUSES.filter((c) => part[field(c)] !== undefined);
    const renamed = absorb(bag, part.ExpressionAttributeNames, part.ExpressionAttributeValues, present.map((c) => part[field(c)]!));
    present.forEach((c, i) => texts.set(c, [...(texts.get(c) ?? []), renamed[i]!]));
  }
  const out: Expr = {};
  for (const [c, list] of texts) {
    if (c === 'Update' && list.length > 1) throw new Error('one update per request');
    out[field(c)] = c === 'Projection' ? list.join(', ') : joined(list, 'AND');
  }
  return finish(out, bag);
}

// ---- conditions ---------------------------------------------------------------------------------

/** A path's placeholder text (`#a.#b`), its names, and its token (`a_b`, for its value's placeholder). */
function pathOf(p: Path): { text: string; names: Names; id: string } {
  const names: Names = {};
  const parts = (typeof p === 'string' ? [p] : p).map((seg) => {
    let k = `#${token(seg)}`;
    for (let n = 2; k in names && names[k] !== seg; n++) k = `#${token(seg)}${n}`;
    names[k] = seg;
    return k;
  });
  return { text: parts.join('.'), names, id: parts.map((k) => k.slice(1)).join('_') };
}

/**
 * A condition of your own: `text` with its names and values (the clause for what no builder
 * says: the rate-limit bucket, the custom-field cap, webhook leases).
 */
export const cond = (text: string, values?: Values, names?: Names) => finish({ ConditionExpression: text }, { names: { ...names }, values: { ...values } }) as Condition;

/** A condition on one path, with one value. */
function on(p: Path, build: (path: string, value: string) => string, ...value: [unknown?]): Condition {
  const { text, names, id } = pathOf(p);
  return cond(build(text, `:${id}`), value.length ? { [`:${id}`]: value[0] } : {}, names);
}

/** The item exists (its partition key, or `attr`, is present). */
export const exists = (attr: Path = TABLE_DEFINITION.partitionKey): Condition => on(attr, (a) => `attribute_exists(${a})`);
/** The item does not exist (or has no `attr`). */
export const notExists = (attr: Path = TABLE_DEFINITION.partitionKey): Condition => on(attr, (a) => `attribute_not_exists(${a})`);

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';
/** `attr <op> value` (`null` compares with a stored NULL). */
export const is = (attr: Path, op: Comparator, value: unknown): Condition => on(attr, (a, v) => `${a} ${op} ${v}`, value);
/** `attr = value`. */
export const eq = (attr: Path, value: unknown): Condition => is(attr, '=', value);
/** The optimistic lock: the item's `ver` is `n`. */
export const version = (n: number): Condition => eq('ver', n);
/** `attr` is one of `values` (`attr IN (:attr_0, …)`). */
export function oneOf(attr: Path, values: readonly unknown[]): Condition {
  const { text, names, id } = pathOf(attr);
  const vals = Object.fromEntries(values.map((v, i) => [`:${id}_${i}`, v]));
  return cond(`${text} IN (${Object.keys(vals).join(', ')})`, vals, names);
}

/** All of the conditions (falsy ones skipped). */
export const and = (...conds: Maybe[]): Expr => merge(...conds);
/** Any of the conditions. */
export function or(...conds: Expr[]): Condition {
  const bag = { names: {}, values: {} };
  const texts = conds.map((c) => absorb(bag, c.ExpressionAttributeNames, c.ExpressionAttributeValues, [c.ConditionExpression!])[0]!);
  return cond(joined(texts, 'OR'), bag.values, bag.names);
}

/** A condition as a Query's filter. */
export const filter = (c: Expr): Expr => relabel(c, 'Filter');

// ---- updates ------------------------------------------------------------------------------------

type Assignments = Record<string, unknown> | Iterable<readonly [Path, unknown]>;
export interface UpdateSpec {
  /** `SET path = value` (keys of a record are attributes; pairs allow paths). */
  set?: Assignments;
  remove?: Iterable<Path>;
  /** `SET path = list_append(…)`: the lists' items appended (to an empty list where there is none). */
  append?: Assignments;
  /** `ADD path value` (numbers add, sets gain members). */
  add?: Assignments;
  /** `DELETE path value` (sets lose members). */
  delete?: Assignments;
}

/** A SET value computed in the expression: its text (a condition's, as `cond` builds it) for the target's path text and token. */
class Computed {
  constructor(readonly build: (target: string, id: string) => Condition) {}
}
/** A SET value that is another attribute's (`SET a = b`). */
export const valueOf = (path: Path) => new Computed(() => cond(pathOf(path).text, {}, pathOf(path).names));
const appended = (items: unknown) => new Computed((t, id) => cond(`list_append(if_not_exists(${t}, :${id}_none), :${id})`, { [`:${id}`]: items, [`:${id}_none`]: [] }));

const pairs = (a: Assignments | undefined): (readonly [Path, unknown])[] => (!a ? [] : Symbol.iterator in a ? [...(a as Iterable<readonly [Path, unknown]>)] : Object.entries(a));

/**
 * An update (`SET … REMOVE … ADD … DELETE …`) from values, with the conditions it is
 * made under. The conditions keep their placeholders; an update's value that clashes is renamed.
 */
export function update(spec: UpdateSpec, ...conditions: Maybe[]): UpdateExpr {
  const { ExpressionAttributeNames: names, ExpressionAttributeValues: values, ...clauses } = merge(...conditions);
  const bag = { names: { ...names }, values: { ...values } };
  const actions = (
    [
      ['SET', [...pairs(spec.set), ...pairs(spec.append).map(([p, items]) => [p, appended(items)] as const)], ' = '],
      ['REMOVE', [...(spec.remove ?? [])].map((p) => [p] as const), ''],
      ['ADD', pairs(spec.add), ' '],
      ['DELETE', pairs(spec.delete), ' '],
    ] as const
  ).flatMap(([verb, list, op]) => {
    const done = list.map(([p, ...value]: readonly [Path, unknown?]) => {
      const { text, names: n, id } = pathOf(p);
      const [target] = absorb(bag, n, {}, [text]);
      if (!value.length) return target!;
      const v = value[0] instanceof Computed ? value[0].build(target!, id) : cond(`:${id}`, { [`:${id}`]: value[0] });
      return `${target}${op}${absorb(bag, v.ExpressionAttributeNames, v.ExpressionAttributeValues, [v.ConditionExpression])[0]}`;
    });
    return done.length ? [`${verb} ${done.join(', ')}`] : [];
  });
  if (!actions.length) throw new Error('an update changes something');
  return finish({ UpdateExpression: actions.join(' '), ...clauses }, bag) as UpdateExpr;
}

// ---- queries ------------------------------------------------------------------------------------

/** A sort key condition: a comparison, `between` two values (inclusive) or `begins_with` a prefix. */
export type SortCondition = readonly [Comparator, string] | readonly ['between', string, string] | readonly ['begins_with', string];
/** The key attributes a query reads: the table's, GSI1's (`'gsi1'`), or others. */
export type KeyAttributes = 'gsi1' | { pk: string; sk: string };

/** A key condition on the sort key `attr` alone (with `merge`, it narrows a partition's). */
export function sortKey(attr: string, sk: SortCondition): Expr {
  const { text, names, id } = pathOf(attr);
  const c =
    sk[0] === 'between'
      ? cond(`${text} BETWEEN :${id} AND :${id}_end`, { [`:${id}`]: sk[1], [`:${id}_end`]: sk[2] }, names)
      : sk[0] === 'begins_with'
        ? on(attr, (a, v) => `begins_with(${a}, ${v})`, sk[1])
        : is(attr, sk[0], sk[1]);
  return relabel(c, 'KeyCondition');
}

/** A key condition: partition `pk`, and its sort key when `sk` is given. */
export function partition(pk: string, sk?: SortCondition, index?: KeyAttributes): Expr {
  const [p, s] =
    index === 'gsi1' ? [TABLE_DEFINITION.gsi1.partitionKey, TABLE_DEFINITION.gsi1.sortKey] : index ? [index.pk, index.sk] : [TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey];
  return merge(relabel(eq(p, pk), 'KeyCondition'), sk && sortKey(s, sk));
}

/**
 * The key condition of a page read strictly beyond the cursor `after`: `pk = :pk [AND sk < :sk]`
 * (newest first; `forward`: `sk > :sk`, oldest first). No `after` (or an empty one): the whole partition.
 */
export const afterCursor = (pk: string, after?: string, opts: { forward?: boolean; index?: KeyAttributes } = {}): Expr =>
  partition(pk, after ? [opts.forward ? '>' : '<', after] : undefined, opts.index);

/** A projection of attributes and paths. */
export function project(...paths: Path[]): Expr {
  const bag = { names: {}, values: {} };
  const texts = paths.map((p) => {
    const { text, names } = pathOf(p);
    return absorb(bag, names, {}, [text])[0]!;
  });
  return finish({ ProjectionExpression: texts.join(', ') }, bag);
}

// ---- items and pages ----------------------------------------------------------------------------

/** The key attributes of a stored item: not the item's own. */
const KEY_ATTRIBUTES: readonly string[] = [
  TABLE_DEFINITION.partitionKey,
  TABLE_DEFINITION.sortKey,
  TABLE_DEFINITION.gsi1.partitionKey,
  TABLE_DEFINITION.gsi1.sortKey,
  TABLE_DEFINITION.gsi2.partitionKey,
  TABLE_DEFINITION.gsi2.sortKey,
];

/** The item a stored item holds, as `T`: its pk, sk and GSI key attributes (and any of `also`) left out. */
export function itemOf<T extends object>(raw: Record<string, unknown>, also?: readonly string[]): T;
export function itemOf<T extends object>(raw: Record<string, unknown> | undefined, also?: readonly string[]): T | undefined;
export function itemOf<T extends object>(raw: Record<string, unknown> | undefined, also: readonly string[] = []): T | undefined {
  if (!raw) return undefined;
  const item: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!KEY_ATTRIBUTES.includes(k) && !also.includes(k)) item[k] = v;
  return item as T;
}

/**
 * A page of at most `limit` items from what a read of `limit + 1` found, and `next`: the position
 * (`position` of the page's last item) to read on from, when more exist.
 */
export function pageOf<T>(found: readonly T[], limit: number, position: (item: T) => string): { items: T[]; next?: string } {
  const items = found.slice(0, limit);
  const last = items[items.length - 1];
  return found.length > limit && last !== undefined ? { items, next: position(last) } : { items };
}

// ---- transactions -------------------------------------------------------------------------------

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The cancellation reasons' codes of a cancelled transaction (`None` for an item that was fine), else undefined. */
export function cancellationCodes(error: unknown): string[] | undefined {
  if (error instanceof TransactionCanceledException) return (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return undefined;
}

/** The items of a cancelled transaction whose condition failed. */
export interface Refusal<L> {
  /** The first refused item: its label (the caller's `labels[index]`), else its index. */
  which: L | number;
  /** Every refused item's index, in order. */
  at: number[];
  /** The cancellation (to rethrow when a refusal is not an answer after all). */
  error: unknown;
}

/**
 * One transaction whose refused conditions are answers: undefined when it was written, else
 * which items were refused (by `labels`, one per item, or by index). Any other failure (a
 * cancellation without a failed condition, e.g. a conflict) throws.
 */
export async function transact<L = never>(items: TransactItem[], labels?: readonly (L | undefined)[]): Promise<Refusal<L> | undefined> {
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items }));
    return undefined;
  } catch (error) {
    const at = (cancellationCodes(error) ?? []).flatMap((code, i) => (code === 'ConditionalCheckFailed' ? [i] : []));
    if (!at.length) throw error;
    return { which: labels?.[at[0]!] ?? at[0]!, at, error };
  }
}

/**
 * One transaction whose refused condition is an answer, not an error: false when the item at
 * `at` (without `at`: any item) failed its condition; any other failure throws.
 */
export async function transactUnlessRefused(items: TransactItem[], at?: number): Promise<boolean> {
  const refused = await transact(items);
  if (refused && at !== undefined && !refused.at.includes(at)) throw refused.error;
  return !refused;
}
