/**
 * Stands in for `@smithy/core/event-streams` inside Lambda bundles (esbuild alias, see
 * lib/bundling.ts). Event streams (S3 SelectObjectContent, Bedrock/Transcribe streaming…) are
 * loaded by the SDK's protocols with a dynamic `import()` only when an operation has an
 * event-stream member, which none of the service's calls (DynamoDB, S3 objects, SQS, KMS) has;
 * the S3 client also wires a marshaller at construction. esbuild inlines dynamic imports, so the
 * codec (~15 KB minified) was in every function. What the S3 client calls at construction is
 * kept as the library has it; using an event stream throws, loudly. Local mode, tests and the
 * admin commands keep the real module.
 */
const unavailable = (): never => {
  throw new Error('AWS SDK event streams are not bundled in this Lambda function (lib/sdk-event-streams.ts)');
};

/** As in @smithy/core: the client's marshaller from its provider (here: one that throws when used). */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (input: T) => unknown }>(input: T) =>
  Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });

export const eventStreamSerdeProvider = () => ({ serialize: unavailable, deserialize: unavailable });

export class EventStreamSerde {
  constructor() {
    unavailable();
  }
}
