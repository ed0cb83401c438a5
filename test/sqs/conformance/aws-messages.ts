/**
 * What AWS answered about messages, as LocalStack recorded it
 * (tests/aws/services/sqs/test_sqs.snapshot.json): which message attributes
 * each MessageAttributeNames filter returns, and the MD5s AWS computed.
 * `item` names issue #35's item for a row holdshelf answers otherwise today.
 */

/** A message attribute as the SDK sends and receives it. */
export interface Attribute {
  readonly DataType: string;
  readonly StringValue?: string;
  readonly BinaryValue?: Uint8Array;
}

/** The message test_receive_message_message_attribute_names_filters sends: body "msg", three attributes. */
export const filteredMessage = {
  body: "msg",
  md5OfBody: "6e2baaf3b97dbeef01c0043275f9a0e7",
  attributes: {
    "Help.Me": { DataType: "String", StringValue: "Me" },
    Hello: { DataType: "String", StringValue: "There" },
    General: { DataType: "String", StringValue: "Kenobi" },
  } as Readonly<Record<string, Attribute>>,
  md5OfAttributes: "4c360f3fdafd970e05fae2f149d997f5",
} as const;

/** Each MessageAttributeNames AWS was asked, the attributes it returned, and their MD5 (none: no attributes). */
export const attributeFilters: readonly {
  readonly names: readonly string[];
  readonly returns: readonly string[];
  readonly md5?: string;
  readonly item?: number;
}[] = [
  { names: [], returns: [] },
  { names: ["All"], returns: ["General", "Hello", "Help.Me"], md5: "4c360f3fdafd970e05fae2f149d997f5" },
  { names: ["*"], returns: ["General", "Hello", "Help.Me"], md5: "4c360f3fdafd970e05fae2f149d997f5" },
  { names: [".*"], returns: ["General", "Hello", "Help.Me"], md5: "4c360f3fdafd970e05fae2f149d997f5" },
  { names: ["Foo", "Help"], returns: [] },
  { names: ["Hello", "General"], returns: ["General", "Hello"], md5: "fca026605781cb4126a1e9044df24232" },
  { names: ["Foo", "Hello"], returns: ["Hello"], md5: "a311262e065454b75da111d535b8dacd" },
  { names: ["Hel.*"], returns: ["Hello", "Help.Me"], md5: "83fee93c1bcd8b9a5a923ffacdc636c7" },
  { names: ["AWS."], returns: [] },
  { names: ["..foo"], returns: [] },
];

/** Messages whose MD5s AWS computed on send (test_send_message_with_binary_attributes, test_dead_letter_queue_message_attributes, test_send_message_batch_with_oversized_contents_with_updated_maximum_message_size). */
export const digestCases: readonly {
  readonly body: string;
  readonly attributes?: Readonly<Record<string, Attribute>>;
  readonly md5OfBody: string;
  readonly md5OfAttributes?: string;
}[] = [
  {
    body: "test",
    attributes: {
      attr1: {
        DataType: "Binary",
        BinaryValue: new TextEncoder().encode("traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01"),
      },
    },
    md5OfBody: "098f6bcd4621d373cade4e832627b4f6",
    md5OfAttributes: "8cbe4db156db8a94db8b801b7addb984",
  },
  {
    body: "message-1",
    attributes: { MyAttribute: { DataType: "String", StringValue: "foobar" } },
    md5OfBody: "3d6b824fd8c1520e9a047d21fee6fb1f",
    md5OfAttributes: "adb59cd4678ea5a855436b949cd07ab6",
  },
  { body: "message-2", md5OfBody: "95ef155b66299d14edf7ed57c468c13b" },
  { body: "a", md5OfBody: "0cc175b9c0f1b6a831c399e269772661" },
];

/** The X-Ray trace header test_dead_letter_queue_message_attributes and test_aws_trace_header_propagation send. */
export const traceHeaders = {
  systemAttribute: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
  httpHeader: "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1",
} as const;

/** A SendMessage whose QueueUrl is the queue's bare name, which AWS accepts (test_posting_to_queue_via_queue_name). */
export const sendByQueueName = {
  body: "Using name instead of URL",
  md5OfBody: "86a83f96652a1bfad3891e7d523750cb",
} as const;
