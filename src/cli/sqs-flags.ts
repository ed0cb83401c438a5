import { parserOptions, type OptionTable } from "./option-table.js";
import type { SqsEndpoint } from "../server/holdshelf-server.js";
import { UsageError } from "./usage-error.js";

/** Defaults of the SQS endpoint's flags: ElasticMQ's port, and the account id local SQS tools use. */
export const sqsDefaults = {
  listen: "127.0.0.1:9324",
  accountId: "000000000000",
  region: "us-east-1",
} as const;

/** The --sqs-listen value that turns the endpoint off. */
export const sqsOff = "off";

/** The SQS endpoint's options. No parser defaults here: parseSqsFlags must see what was given. */
export const sqsOptionTable = {
  "sqs-listen": {
    type: "string",
    value: "HOST:PORT|off",
    env: "HOLDSHELF_SQS_LISTEN",
    shownDefault: sqsDefaults.listen,
    description: "where the SQS-compatible endpoint listens (docs/sqs.md), or off",
  },
  "sqs-credentials": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_SQS_CREDENTIALS",
    description: "access keys SQS requests must be signed with (SigV4); unsigned requests are taken without it",
  },
  "sqs-account-id": {
    type: "string",
    value: "DIGITS",
    env: "HOLDSHELF_SQS_ACCOUNT_ID",
    shownDefault: sqsDefaults.accountId,
    description: "the account id in queue URLs and ARNs",
  },
  "sqs-region": {
    type: "string",
    value: "REGION",
    env: "HOLDSHELF_SQS_REGION",
    shownDefault: sqsDefaults.region,
    description: "the region in ARNs",
  },
  "sqs-advertised-url": {
    type: "string",
    value: "URL",
    env: "HOLDSHELF_SQS_ADVERTISED_URL",
    description: "where clients reach the endpoint, if not at its listen address",
  },
} as const satisfies OptionTable;

/** The SQS endpoint's flags for parseArgs; each has an environment variable. */
export function sqsFlagOptions(env: NodeJS.ProcessEnv) {
  return parserOptions(sqsOptionTable, env);
}

/** What parseSqsFlags decided: the endpoint to serve, or why there is none. */
export type SqsFlags =
  | { readonly endpoint: SqsEndpoint }
  | { readonly endpoint: undefined; readonly offBecause: string };

/**
 * The SQS endpoint the flags ask for. It is on by default, on loopback. A
 * broker that requires bearer tokens (--auth-file) but has no SQS access
 * keys leaves the default endpoint off rather than open it unsigned, so a
 * deployment with tokens keeps starting as before; asking for the listener
 * explicitly in that state is refused.
 */
export function parseSqsFlags(
  values: {
    "sqs-listen"?: string | undefined;
    "sqs-credentials"?: string | undefined;
    "sqs-account-id"?: string | undefined;
    "sqs-region"?: string | undefined;
    "sqs-advertised-url"?: string | undefined;
  },
  context: { readonly authFile: string | undefined; readonly cluster: boolean },
): SqsFlags {
  const listen = values["sqs-listen"];
  const credentialsFile = values["sqs-credentials"];
  if (credentialsFile === "")
    throw new UsageError(
      "--sqs-credentials (HOLDSHELF_SQS_CREDENTIALS) is empty: name the access keys' file, or unset it",
    );
  if (listen === sqsOff) return { endpoint: undefined, offBecause: "--sqs-listen off" };
  if (context.authFile !== undefined && credentialsFile === undefined) {
    if (listen !== undefined) {
      throw new UsageError(
        "--sqs-listen: this broker requires bearer tokens (--auth-file), so the SQS endpoint needs access keys too: pass --sqs-credentials, or --sqs-listen off",
      );
    }
    return { endpoint: undefined, offBecause: "--auth-file without --sqs-credentials" };
  }
  if (context.cluster && credentialsFile !== undefined) {
    // A call another broker owns is passed on over gRPC, which checks bearer tokens, not signatures.
    throw new UsageError(
      "--sqs-credentials is not supported in cluster mode yet: SQS calls other brokers serve cannot carry the signer's permissions",
    );
  }
  const accountId = values["sqs-account-id"] ?? sqsDefaults.accountId;
  if (!/^\d{12}$/.test(accountId)) throw new UsageError("--sqs-account-id is 12 digits, as AWS account ids are");
  const region = values["sqs-region"] ?? sqsDefaults.region;
  if (!/^[a-z0-9-]{1,40}$/.test(region)) throw new UsageError("--sqs-region is a region name such as us-east-1");
  const advertisedUrl = values["sqs-advertised-url"];
  if (advertisedUrl !== undefined && !/^https?:\/\/[^/?#\s]+\/?$/.test(advertisedUrl)) {
    throw new UsageError("--sqs-advertised-url is a scheme and authority, such as http://queues.example.com:9324");
  }
  return {
    endpoint: {
      listen: listen ?? sqsDefaults.listen,
      accountId,
      region,
      ...(credentialsFile === undefined ? {} : { credentialsFile }),
      ...(advertisedUrl === undefined ? {} : { advertisedUrl }),
    },
  };
}
