/** The erasure queue's messages and the files an erasure deletes (contract §18). */
import { requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { type JobMessage, jobMessages } from '../imports/storage.js';

export type ErasureMessage = JobMessage<'erasure_id'>;
export const { parse: parseErasureMessage, enqueue: enqueueErasure, fairness: erasureQueueFairness } = jobMessages('erasure_id', () => requireEnv(bindingEnv('erasuresQueue')));
