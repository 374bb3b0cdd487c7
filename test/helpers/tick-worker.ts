/**
 * A worker handler for test/integration/local-topology.test.ts: a function that is in no list of
 * local/ (its topology entry is the test's). Each run is reported to `globalThis.__tickWorker`.
 */
import type { ScheduledEvent } from 'aws-lambda';

export const handler = async (event: ScheduledEvent): Promise<void> => {
  (globalThis as { __tickWorker?: (event: ScheduledEvent) => void }).__tickWorker?.(event);
};
