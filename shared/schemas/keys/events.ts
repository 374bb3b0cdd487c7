/** Keys of the change log (contract §12). */
import { ACCOUNT, defineKeys, personalFlags } from './define.js';

const SECONDS = `${ACCOUNT}#evs`;
const POSITION = '{seq:15}';

export const EVENT_KEYS = defineKeys({
  /**
   * The account's log head: the last position written and when. Moved from n to n+k in the
   * same transaction that writes entries n+1..n+k, so every position at or below it is committed.
   */
  eventHead: [`${ACCOUNT}#evh`, 'H'],
  /** The log: one entry per event, sorted by position… */
  eventPartition: `${ACCOUNT}#ev`,
  /** …the same entries in one partition per event name (the `types` filter)… */
  eventTypePartition: `${ACCOUNT}#evt#{event}`,
  /** …and one per record (`record_id`: a record's history). */
  eventRecordPartition: `${ACCOUNT}#evr#{recordId}`,
  eventEntry: ['{partition}', POSITION],
  /** The sort key of an entry: its position, zero-padded so it orders numerically. */
  eventPosition: POSITION,
  /**
   * The first position appended in each second (sk: `YYYY-MM-DDTHH:MM:SS` of the append time):
   * where `since` starts and which entries are still retained, in one Query.
   */
  eventSecondPartition: SECONDS,
  eventSecond: [SECONDS, '{second}'],
  /** One marker per logged event id (its position): a retried stream batch appends nothing twice. */
  eventMarker: [`${ACCOUNT}#evid#{eventId}`, 'E'],
});

/** The log's entries hold the event bodies (a record as the API returned it); the rest is bookkeeping. */
export const EVENT_PERSONAL = /* @__PURE__ */ personalFlags(EVENT_KEYS, { eventHead: false, eventEntry: true, eventSecond: false, eventMarker: false });
