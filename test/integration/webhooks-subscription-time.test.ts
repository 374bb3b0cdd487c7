/**
 * Contract §6: which endpoints get an event is decided by the event's own time, never by how late
 * the changes worker reaches it. The worker is held back (no stream worker runs) while endpoints
 * are created, unsubscribed, disabled and enabled around writes; once it catches up, each endpoint
 * has exactly the events raised while it subscribed to them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount, ok } from '../helpers/api.js';
import { startTestStream } from '../helpers/stream.js';
import { deliveriesOf, type Pipeline, Receiver, registerEndpoint, startPipeline, waitFor } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_TIMEOUT_MS = '2000';

let pipeline: Pipeline;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await new Receiver().start();
  pipeline = await startPipeline({ stream: false });
});
afterAll(async () => {
  await pipeline?.stop();
  await receiver?.close();
});

/** A moment apart, so that the endpoint's change and the writes around it have different times. */
const tick = () => new Promise((r) => setTimeout(r, 15));

describe('subscription by the event\'s own time (§6)', () => {
  it('gives each endpoint exactly the events raised while it subscribed, however late the worker handles them', async () => {
    const auth = newAccount();
    const events = ['contact.created', 'contact.updated'];
    const before = await ok<{ id: string }>('contacts-create', { first_name: 'Before' }, auth);
    await tick();
    const late = await registerEndpoint(auth, receiver, '/late', events);
    const toggled = await registerEndpoint(auth, receiver, '/toggled', events);
    await tick();
    const during = await ok<{ id: string }>('contacts-create', { first_name: 'During' }, auth);
    await ok('contacts-update', { id: before.id, last_name: 'Updated' }, auth);
    await tick();
    // `late` stops taking creations; `toggled` is disabled, then enabled again after a write.
    await ok('webhooks-update', { id: late.id, events: ['contact.updated'] }, auth);
    await ok('webhooks-update', { id: toggled.id, is_active: false }, auth);
    await tick();
    const whileOff = await ok<{ id: string }>('contacts-create', { first_name: 'WhileOff' }, auth);
    await tick();
    await ok('webhooks-update', { id: toggled.id, is_active: true }, auth);
    await tick();
    const after = await ok<{ id: string }>('contacts-create', { first_name: 'After' }, auth);
    await ok('contacts-update', { id: during.id, last_name: 'Again' }, auth);

    // Only now does the changes worker run: everything above is handled late.
    const poller = await startTestStream({ awsEndpoint: pipeline.endpoint });
    try {
      await poller.drain();
      const got = async (endpointId: string) => (await deliveriesOf(auth, endpointId, 100)).map((d) => d.event_type).sort();
      const lateGot = await waitFor(async () => ((await got(late.id)).length >= 3 ? got(late.id) : undefined), 20_000, 'late endpoint deliveries');
      // late: During's creation, Before's update (while subscribed to both), During's update (after it kept only updates).
      expect(lateGot).toEqual(['contact.created', 'contact.updated', 'contact.updated']);
      const lateIds = (await receiverIds('/late'));
      expect(lateIds.sort()).toEqual([`contact.created:${during.id}`, `contact.updated:${before.id}`, `contact.updated:${during.id}`].sort());
      // toggled: During's creation, Before's update, then (after it was enabled again) After's creation and During's update; never WhileOff.
      const toggledIds = await waitFor(async () => ((await receiverIds('/toggled')).length >= 4 ? receiverIds('/toggled') : undefined), 20_000, 'toggled endpoint deliveries');
      expect(toggledIds.sort()).toEqual([`contact.created:${during.id}`, `contact.updated:${before.id}`, `contact.created:${after.id}`, `contact.updated:${during.id}`].sort());
      expect(toggledIds.join()).not.toContain(whileOff.id);
      expect(toggledIds.join() + lateIds.join()).not.toContain(`contact.created:${before.id}`);
    } finally {
      await poller.stop();
    }
  });
});

async function receiverIds(path: string): Promise<string[]> {
  await pipeline.worker.drain();
  return receiver.at(path).map((r) => `${r.payload!.event}:${String(r.payload!.data.id)}`);
}
