import { jobQueueHandler } from '../../shared/http/job-handler.js';
import { parseIndexBuildMessage } from '../../shared/indexing/storage.js';
import { indexBuildFairness, type IndexBuildWorkerDeps, runIndexBuild } from '../../shared/indexing/worker.js';

/**
 * The index-build worker: a message names one build of a custom field's sort-ordered entries
 * (contract §17); a failure resumes after its last saved page. `deps` replaces the worker's
 * settings (tests stop builds).
 */
export const indexBuildHandler = (deps: IndexBuildWorkerDeps = {}) =>
  jobQueueHandler({ job: 'index build', parse: parseIndexBuildMessage, logKeys: (m) => ({ buildId: m.build_id }), run: (m) => runIndexBuild(m, deps), fair: indexBuildFairness });

export const handler = indexBuildHandler();
