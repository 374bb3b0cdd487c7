/**
 * The `bundles` section of `npm run bench`, also runnable alone:
 *
 *   npm run bench:bundles [-- --only <name,...>] [--rounds <n>] [--no-init] [--why <name>]
 *
 * Each function of the topology is bundled with the stack's esbuild settings (lib/bundling.ts),
 * its size taken, and the time of a fresh `node` importing it measured beside a bare `node -e 0`
 * (median of 7 starts each; with `--rounds n`, that whole measurement is repeated n times,
 * interleaved, and the median of the rounds reported). `--why <name>` prints what the bundle of
 * one function carries, by package, from esbuild's metafile.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { FUNCTIONS } from '../functions/topology.js';
import { LAMBDA_BUNDLE } from '../lib/bundling.js';
import { percentile, table } from './stats.js';

export interface BundleRow extends Record<string, unknown> {
  name: string;
  api: boolean;
  bytes: number;
  init_ms?: number;
  bare_node_ms?: number;
  ratio?: number;
}

const round = (x: number) => Math.round(x * 100) / 100;
const median = (xs: number[]) => percentile(xs, 50);

/** Bundles one handler module (relative to functions/) to `outfile` with the stack's settings. */
export async function bundleFunction(entry: string, outfile: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(import.meta.dirname, '..', 'functions', entry)],
    bundle: true, outfile, logLevel: 'silent', metafile: true,
    ...LAMBDA_BUNDLE, mainFields: [...LAMBDA_BUNDLE.mainFields], banner: { js: LAMBDA_BUNDLE.banner },
  });
  return result.metafile;
}

/** Bytes of the output per package (or per folder of ours), largest first. */
export function bundleContents(meta: Metafile): { what: string; bytes: number }[] {
  const out = Object.values(meta.outputs)[0]!;
  const by = new Map<string, number>();
  for (const [file, { bytesInOutput }] of Object.entries(out.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const what = m ? m[1]! : file.split('/').slice(0, 2).join('/');
    by.set(what, (by.get(what) ?? 0) + bytesInOutput);
  }
  return [...by].map(([what, bytes]) => ({ what, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const startTime = (args: string[]) => {
  const t = performance.now();
  execFileSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, AWS_REGION: 'us-east-1', TABLE_NAME: 'bench' } });
  return performance.now() - t;
};
const startTimes = (args: string[], n = 7) => median(Array.from({ length: n }, () => startTime(args)));

/**
 * Sizes (and, unless `init` is false, cold init against a bare node) of the topology's functions,
 * or of those named in `only`.
 */
export async function benchBundles(opts: { only?: string[]; rounds?: number; init?: boolean; log?: (...a: unknown[]) => void } = {}): Promise<BundleRow[]> {
  const outDir = mkdtempSync(join(tmpdir(), 'crm-bundles-'));
  try {
    const specs = FUNCTIONS.filter((f) => !opts.only || opts.only.includes(f.name));
    const built = await Promise.all(specs.map(async (f) => {
      const outfile = join(outDir, `${f.name}.mjs`);
      await bundleFunction(f.entry, outfile);
      return { name: f.name, api: f.trigger.kind === 'http', outfile, bytes: statSync(outfile).size };
    }));
    if (opts.init === false) return built.map(({ name, api, bytes }) => ({ name, api, bytes }));
    const rounds = opts.rounds ?? 1;
    const bare: number[] = [];
    const inits = new Map<string, number[]>(built.map((b) => [b.name, []]));
    for (let r = 0; r < rounds; r++) {
      opts.log?.(`init round ${r + 1}/${rounds}`);
      bare.push(startTimes(['-e', '0']));
      for (const b of built) inits.get(b.name)!.push(startTimes(['--input-type=module', '-e', `await import(${JSON.stringify(b.outfile)})`]));
    }
    const bareMs = median(bare);
    return built.map(({ name, api, bytes }) => {
      const init = median(inits.get(name)!);
      return { name, api, bytes, init_ms: round(init), bare_node_ms: round(bareMs), ratio: round(init / bareMs) };
    });
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Median, max and the largest of each kind, for the summary line. */
export function bundleSummary(rows: BundleRow[]) {
  const api = rows.filter((r) => r.api);
  const kb = (b: number) => Math.round(b / 1024);
  const ratios = api.flatMap((r) => (r.ratio === undefined ? [] : [r.ratio]));
  return {
    api_operations: api.length,
    api_median_kb: kb(median(api.map((r) => r.bytes))),
    api_max: api.reduce((m, r) => (r.bytes > m.bytes ? r : m), api[0]!)?.name,
    api_max_kb: kb(Math.max(...api.map((r) => r.bytes))),
    api_over_300kb: api.filter((r) => r.bytes > 300 * 1024).map((r) => `${r.name} ${kb(r.bytes)}`),
    ...(ratios.length ? { api_median_init_ratio: median(ratios), all_median_init_ratio: median(rows.flatMap((r) => (r.ratio === undefined ? [] : [r.ratio]))) } : {}),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  if (process.argv.includes('--help')) {
    console.log('npm run bench:bundles [-- --only <name,...>] [--rounds <n>] [--no-init] [--why <name>]');
    process.exit(0);
  }
  const why = arg('--why');
  if (why) {
    const spec = FUNCTIONS.find((f) => f.name === why);
    if (!spec) throw new Error(`no function ${why}`);
    const dir = mkdtempSync(join(tmpdir(), 'crm-bundle-why-'));
    const meta = await bundleFunction(spec.entry, join(dir, 'out.mjs'));
    rmSync(dir, { recursive: true, force: true });
    console.log(table(bundleContents(meta).slice(0, 40).map((r) => ({ ...r, kb: round(r.bytes / 1024) }))));
    process.exit(0);
  }
  const rows = await benchBundles({
    only: arg('--only')?.split(','),
    rounds: Number(arg('--rounds') ?? 1),
    init: !process.argv.includes('--no-init'),
    log: (...a) => console.error('[bundles]', ...a),
  });
  console.log(table(rows.map((r) => ({ ...r, kb: Math.round(r.bytes / 1024) }))));
  console.log(JSON.stringify(bundleSummary(rows), null, 2));
}
