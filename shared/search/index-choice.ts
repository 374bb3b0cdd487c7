/**
 * Which index a list reads (pure: the data layer runs the probes and reads the sampled sizes it
 * is told to, then asks `pickOption`). Every option is a union of partitions holding every match
 * (a superset), so the smallest one wins.
 */

/** A union of index partitions that holds every match; `sampled`: search-prefix partitions, whose sizes are counted. */
export interface IndexOption {
  names: string[];
  sampled: boolean;
}

/** Options with more partitions than this are not probed (they stay eligible as a fallback). */
export const MAX_PROBED_PARTITIONS = 3;

/** The distinct non-empty options, in order of preference. */
export const distinctOptions = (options: readonly IndexOption[]): IndexOption[] =>
  options.filter((o, i) => o.names.length > 0 && options.findIndex((x) => x.names.join() === o.names.join()) === i);

/** What to measure before choosing: the options small enough to probe, and whether sampled sizes can decide between search options. */
export function measurements(unique: readonly IndexOption[]): { probe: (o: IndexOption) => boolean; sized: IndexOption[] } {
  const sized = unique[0]?.sampled ? unique.filter((o) => o.sampled) : [];
  return { probe: (o) => o.names.length <= MAX_PROBED_PARTITIONS, sized: sized.length > 1 ? sized : [] };
}

export interface Probed {
  option: IndexOption;
  /** Entries counted (Infinity when not probed). */
  count: number;
  /** Every partition of the option was read to its end. */
  exhausted: boolean;
}

/**
 * Small options are found by counting at most one page of each (a few cheap COUNT queries); an
 * option found empty means the page is empty. When every option holds more than a page, the
 * search options (several query words) are compared by their partitions' sampled sizes and the
 * rarest word's partition is read; otherwise the first (preferred) option is read.
 */
export function pickOption(unique: readonly IndexOption[], probed: readonly Probed[], sizes: ReadonlyMap<string, number> | undefined, sized: readonly IndexOption[], want: number): IndexOption | 'empty' {
  const small = probed.filter((p) => p.exhausted).sort((a, b) => a.count - b.count)[0];
  if (small) return small.count === 0 ? 'empty' : small.option;
  if (sizes) {
    // Each of these partitions holds at least `want` entries (the probe was not exhausted).
    const size = (o: IndexOption) => o.names.reduce((n, name) => n + Math.max(sizes.get(name) ?? 0, want), 0);
    return [...sized].sort((a, b) => size(a) - size(b))[0]!;
  }
  return unique[0]!;
}
