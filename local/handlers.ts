/**
 * A function's handler, loaded from its topology entry (`functions/<entry>`, exporting `handler`)
 * as Lambda loads its bundle: once per entry, on first use.
 */
const loaded = new Map<string, Promise<unknown>>();

export function loadHandler<H = (event: never) => Promise<unknown>>(entry: string): Promise<H> {
  let p = loaded.get(entry);
  if (!p) {
    p = import(new URL(`../functions/${entry.replace(/\.ts$/, '.js')}`, import.meta.url).href).then((m: { handler?: unknown }) => {
      if (typeof m.handler !== 'function') throw new Error(`functions/${entry} exports no handler`);
      return m.handler;
    });
    loaded.set(entry, p);
  }
  return p as Promise<H>;
}
