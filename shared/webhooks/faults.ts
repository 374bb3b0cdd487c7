/**
 * Fault injection for the at-least-once tests: each hook, when a test sets it, runs at the
 * named point of the pipeline and may throw to simulate a worker dying there. Never set
 * outside tests.
 */
export const webhookFaults: {
  /** Stream consumer: delivery records written, queue messages not sent yet. */
  afterDeliveryWrite?: () => void;
  /** Delivery worker: the receiver answered, the attempt is not recorded yet. */
  afterPost?: () => void;
} = {};
