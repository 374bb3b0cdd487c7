/**
 * No AWS call waits without a bound (docs/architecture.md, "What keeps the asynchronous half
 * alive"): a connection not made in 5 s, or a request with no answer for 30 s, fails (and the SDK
 * retries it) instead of holding a worker, a slot or an account's changes for good. Every SDK
 * client of the service is built with these (its `requestHandler` options).
 */
export const CALL_TIME_LIMITS = { connectionTimeout: 5_000, requestTimeout: 30_000 } as const;
