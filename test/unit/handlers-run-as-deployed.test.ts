/**
 * Local mode is the deployment's twin only if every function's calls are checked against its
 * deployed role (local/iam.ts). The local server, the workers and `invokeOperation` run handlers
 * through `loadHandler`, which does that; a test that imports a handler from `functions/` and
 * calls it directly would run it with no role at all. Every such use must go through
 * `asFunction(functionByName(…)!, …)`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
/** Modules of `functions/` that declare rather than handle (no AWS call of their own). */
const DECLARATIONS = new Set(['functions/topology.js', 'functions/operations.js']);

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* testFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** Local names bound by value imports from a handler module of `functions/`. */
export function handlerImports(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/^import \{([^}]*)\} from '(?:\.\.\/)+(functions\/[^']+)';$/gm)) {
    if (DECLARATIONS.has(m[2]!)) continue;
    for (const part of m[1]!.split(',')) {
      const p = part.trim();
      if (!p || p.startsWith('type ')) continue;
      names.push(p.split(/\s+as\s+/).pop()!);
    }
  }
  return names;
}

/** Lines (1-based) that use `name` outside its import and outside `asFunction(`. */
export function unwrappedUses(source: string, name: string): number[] {
  const word = new RegExp(`\\b${name}\\b`);
  return source.split('\n').flatMap((line, i) => (word.test(line) && !line.startsWith('import ') && !line.includes('asFunction(') ? [i + 1] : []));
}

describe('tests run handlers as their deployed functions', () => {
  it('finds the unwrapped call it is meant to catch', () => {
    const source = "import { handler as streamHandler } from '../../functions/stream/handler.js';\nawait streamHandler(event);\nconst ok = asFunction(functionByName('stream')!, streamHandler);\n";
    expect(handlerImports(source)).toEqual(['streamHandler']);
    expect(unwrappedUses(source, 'streamHandler')).toEqual([2]);
  });

  it('every handler a test imports from functions/ is called through asFunction', () => {
    const offences: string[] = [];
    for (const file of testFiles(join(ROOT, 'test'))) {
      if (file.endsWith('handlers-run-as-deployed.test.ts') || file.endsWith('deployed-bundles.test.ts')) continue;
      const source = readFileSync(file, 'utf8');
      for (const name of handlerImports(source)) for (const line of unwrappedUses(source, name)) offences.push(`${relative(ROOT, file)}:${line} ${name}`);
    }
    expect(offences).toEqual([]);
  });
});
