/**
 * Which endpoints get an event is decided by the event's own time (contract §6): an endpoint gets
 * exactly the events raised while it subscribed to them: after it was created, enabled or
 * subscribed to that event, and before it was disabled or unsubscribed, however late the
 * changes worker reaches the event. Each endpoint keeps its subscription windows
 * (`subscriptions`: the events and `[from, until)`), one per stretch of unchanged subscription.
 */
import type { EndpointItem } from '../db/webhooks.js';

export interface SubscriptionWindow {
  events: string[];
  from: string;
  /** Absent while the window is open. */
  until?: string;
}

/**
 * Windows kept per endpoint: enough for any event still in the pipeline (the stream keeps 24 h,
 * the changes queue retries within that): windows closed more than 7 days ago are dropped, and at
 * most 50 are kept.
 */
const KEEP_WINDOWS = 50;
const KEEP_CLOSED_MS = 7 * 86_400_000;

/** The endpoint's windows (an endpoint written before windows were kept: one, from its creation). */
export function windowsOf(e: Pick<EndpointItem, 'subscriptions' | 'events' | 'created_at' | 'is_active' | 'updated_at'>): SubscriptionWindow[] {
  return e.subscriptions ?? [{ events: e.events, from: e.created_at, ...(e.is_active ? {} : { until: e.updated_at }) }];
}

/**
 * Whether the endpoint subscribed to `event` when it was raised: at `at`, or (a time known only
 * within a range: a deletion's, which only the stream dates) at some moment of `[at, latest]`.
 */
export function subscribedAt(e: Pick<EndpointItem, 'subscriptions' | 'events' | 'created_at' | 'is_active' | 'updated_at'>, event: string, at: string, latest = at): boolean {
  return windowsOf(e).some((w) => w.from <= latest && (w.until === undefined || at < w.until) && w.events.includes(event));
}

/** The windows after a change at `at` to what the endpoint subscribes to (its events and whether it is active). */
export function windowsAfter(windows: SubscriptionWindow[], now: { active: boolean; events: string[] }, at: string): SubscriptionWindow[] {
  const closed = windows.map((w) => (w.until === undefined ? { ...w, until: at } : w));
  const next = now.active ? [...closed, { events: now.events, from: at }] : closed;
  const oldest = new Date(Date.parse(at) - KEEP_CLOSED_MS).toISOString();
  return next.filter((w) => w.until === undefined || w.until > oldest).slice(-KEEP_WINDOWS);
}
