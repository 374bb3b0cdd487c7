/** The index-build queue's messages (contract §17: a change of a custom field's `indexed`). */
import { bindingEnv } from '../config/bindings.js';
import { requireEnv } from '../config/env.js';
import { type JobMessage, jobMessages } from '../imports/storage.js';

export type IndexBuildMessage = JobMessage<'build_id'>;
export const { parse: parseIndexBuildMessage, enqueue: enqueueIndexBuild, fairness: indexBuildQueueFairness } = jobMessages('build_id', () => requireEnv(bindingEnv('indexBuildsQueue')));
