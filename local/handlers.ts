/**
 * A function's handler, loaded from its topology entry (`functions/<entry>`, exporting `handler`)
 * as Lambda loads its bundle: once per entry, on first use. It runs as its function of the
 * topology (local/iam.ts): every AWS SDK call it makes is checked against that function's policy.
 */
import { FUNCTIONS } from '../functions/topology.js';
import { installFairGate } from './fair-gate.js';
import { asFunction, installIamEnforcement } from './iam.js';

installIamEnforcement();
installFairGate();

const loaded = new Map<string, Promise<unknown>>();

export function loadHandler<H = (event: never) => Promise<unknown>>(entry: string): Promise<H> {
  let p = loaded.get(entry);
  if (!p) {
    const spec = FUNCTIONS.find((f) => f.entry === entry);
    p = import(new URL(`../functions/${entry.replace(/\.ts$/, '.js')}`, import.meta.url).href).then((m: { handler?: unknown }) => {
      if (typeof m.handler !== 'function') throw new Error(`functions/${entry} exports no handler`);
      return spec ? asFunction(spec, m.handler as (...args: unknown[]) => unknown) : m.handler;
    });
    loaded.set(entry, p);
  }
  return p as Promise<H>;
}
