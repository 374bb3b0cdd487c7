/** Edit distance (insertions, deletions, substitutions), stopping early past `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]!);
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The name nearest to `input` (`contact-list` → `contacts-list`), when it is near: at most a
 * third of its length in edits (at least 2), or the same words in another order or form
 * (`list-contacts`, `contacts_list`). Undefined when nothing is near.
 */
export function closestName(input: string, names: readonly string[]): string | undefined {
  if (input.length > 64) return undefined;
  const normal = input.replace(/[_\s.]+/g, '-');
  const reversed = normal.split('-').reverse().join('-');
  const max = Math.max(2, Math.floor(normal.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = Math.min(editDistance(normal, name, max), editDistance(reversed, name, max));
    if (d <= max && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
