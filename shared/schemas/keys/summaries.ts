/**
 * Keys of the summary counters (contract §21), in the control table. Not part of
 * `TABLE_KEYS` (every bundle carries those, and the record writes' have no bytes to spare): the
 * data layer derives their builders apart (`summaryKeys` in shared/db/table.ts), and only the
 * changes worker, the summary and board operations and the rebuild command carry them.
 */
import { ACCOUNT, defineKeys } from './define.js';

/** Built in a call marked `@__PURE__` (its templates' substitutions would otherwise keep it in every bundle that imports the table module). */
export const SUMMARY_KEYS = /* @__PURE__ */ (() => {
  const SUMMARIES = `${ACCOUNT}#sm`;
  return defineKeys({
  /**
   * One counter per (dimension, group): `n` records, and for projects per `<bucket>|<currency>`
   * the sum of their amounts (`a:…`, cents) and how many have an amount (`k:…`). A dimension's
   * groups are one partition (`stage#<pipeline>`, `pipeline`, `status`, `status#<pipeline>`,
   * `close_month`, `close_month#<pipeline>`, `project.owner`, `contact.owner`, `contact.source`,
   * `company.owner`, `activity.assignee[#done|#open]`, `activity.type[#done|#open]`), read by Query.
   */
  summaryCounter: [`${SUMMARIES}#{dimension}`, '{group}'],
  summaryPartition: `${SUMMARIES}#{dimension}`,
  /** One marker per counted change (its stream event id, expiring after 14 days): a redelivered change never counts twice. */
  summaryMarker: [`${ACCOUNT}#smid#{eventId}`, 'M'],
  });
})();
