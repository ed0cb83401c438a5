import { maxTraceHeaderCharacters } from "../protocol/limits.js";
import { isTraceHeaderText } from "../protocol/trace-header-text.js";
import { md5OfMessageAttributes } from "./message-digests.js";
import { sqsErrors } from "./sqs-error.js";
import { structureMap, type SqsInput } from "./sqs-input.js";

/** The only message system attribute a send may set: X-Ray's and OpenTelemetry's trace header. */
export const traceHeaderName = "AWSTraceHeader";

/** A send's message system attributes as holdshelf keeps them. */
export interface SentSystemAttributes {
  /** The trace header to store; undefined for none. */
  readonly traceHeader: string | undefined;
  /** MD5OfMessageSystemAttributes of what MessageSystemAttributes held; undefined with none. */
  readonly md5: string | undefined;
}

/**
 * Reads a send's MessageSystemAttributes as SQS does: AWSTraceHeader, of
 * type String, is the only name. Without it, the request's X-Amzn-Trace-Id
 * header (`requestTraceHeader`) is the message's trace header, as AWS
 * records it from an X-Ray-instrumented client; one the broker would refuse
 * is left out rather than failing the send. As in SQS, the digest is over
 * MessageSystemAttributes only, computed as MD5OfMessageAttributes is.
 */
export function systemAttributesFromSqs(input: SqsInput, requestTraceHeader: string | undefined): SentSystemAttributes {
  let given: string | undefined;
  for (const [name, value] of structureMap(input, "MessageSystemAttributes")) {
    if (name !== traceHeaderName) {
      throw sqsErrors.invalidParameterValue(
        `Message system attribute name '${name}' is invalid. The only one is ${traceHeaderName}.`,
      );
    }
    const text = value["StringValue"];
    if (value["DataType"] !== "String" || typeof text !== "string") {
      throw sqsErrors.invalidParameterValue(
        `The message system attribute '${traceHeaderName}' must be of type String with a StringValue.`,
      );
    }
    if (!isTraceHeaderText(text)) {
      throw sqsErrors.invalidParameterValue(
        `The message system attribute '${traceHeaderName}' must be 1 to ${maxTraceHeaderCharacters} characters of printable ASCII.`,
      );
    }
    given = text;
  }
  if (given !== undefined) {
    return {
      traceHeader: given,
      md5: md5OfMessageAttributes({ [traceHeaderName]: { DataType: "String", StringValue: given } }),
    };
  }
  return {
    traceHeader:
      requestTraceHeader !== undefined && isTraceHeaderText(requestTraceHeader) ? requestTraceHeader : undefined,
    md5: undefined,
  };
}
