import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root. */
export const repoRoot = join(import.meta.dirname, '..', '..');

/** Every `.ts` file under `dir` (relative to the repository's root), as relative paths. */
export const tsFilesUnder = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? tsFilesUnder(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));

/** A file of the repository, by relative path. */
export const readRepoFile = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
