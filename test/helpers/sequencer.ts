import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest files first, so that the two workers end together instead of one finishing a long
 * file alone at the tail. A file's weight is its duration in this checkout's last run (vitest's
 * results cache) when there is one; otherwise its duration in test/helpers/durations.json (seconds
 * of a whole-suite run on 2 cores: a fresh clone, as CI has, has no cache); otherwise an estimate
 * from its size (a new file). Update durations.json from a whole run's per-file lines when
 * files get much faster or slower.
 */
const KNOWN = JSON.parse(readFileSync(join(import.meta.dirname, 'durations.json'), 'utf8')) as Record<string, number>;

/** Seconds per byte of test source for files with no known duration (an integration file of ~10 KB runs ~10 s). */
const SECONDS_PER_BYTE = 1 / 1_000;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      if (cached) return cached / 1_000;
      if (KNOWN[file] !== undefined) return KNOWN[file];
      const seconds = statSync(spec.moduleId).size * SECONDS_PER_BYTE;
      return file.startsWith('test/unit/') ? seconds / 10 : seconds;
    };
    const weights = new Map(files.map((f) => [f, weight(f)]));
    return [...files].sort((a, b) => weights.get(b)! - weights.get(a)!);
  }
}
