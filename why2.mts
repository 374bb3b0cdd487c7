import { bundleFunction } from '/work/main/bench/bundles.ts';
const { FUNCTIONS } = await import('/work/main/functions/topology.ts');
const spec = FUNCTIONS.find((f: { name: string }) => f.name === process.argv[2])!;
const meta = await bundleFunction(spec.entry, `/tmp/why.mjs`);
const out = Object.values(meta.outputs)[0]!;
const rows = Object.entries(out.inputs).filter(([f]) => f.includes(process.argv[3]!)).map(([f, { bytesInOutput }]) => [bytesInOutput, f] as const).sort((a, b) => b[0] - a[0]);
for (const [b, f] of rows.slice(0, 40)) console.log(String(b).padStart(7), f.replace(/.*node_modules\//, ''));
