// Entry of local mode's workers thread (local/workers.ts): registers tsx in this thread (it does
// not carry over from the main thread), then loads the TypeScript entry.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
