import { describe, expect, it } from "vitest";
import { parseSqsFlags } from "../../src/cli/sqs-flags.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { checkListenPolicy, ListenPolicyError } from "../../src/security/listen-policy.js";

const embedded = { authFile: undefined, cluster: false };

describe("parseSqsFlags", () => {
  it("serves on 127.0.0.1:9324 with account 000000000000 by default", () => {
    expect(parseSqsFlags({}, embedded)).toEqual({
      endpoint: { listen: "127.0.0.1:9324", accountId: "000000000000", region: "us-east-1" },
    });
  });

  it("takes every setting, and turns off with --sqs-listen off", () => {
    expect(
      parseSqsFlags(
        {
          "sqs-listen": "0.0.0.0:4566",
          "sqs-credentials": "/etc/keys.json",
          "sqs-account-id": "123456789012",
          "sqs-region": "eu-west-1",
          "sqs-advertised-url": "https://queues.example.com",
        },
        embedded,
      ),
    ).toEqual({
      endpoint: {
        listen: "0.0.0.0:4566",
        credentialsFile: "/etc/keys.json",
        accountId: "123456789012",
        region: "eu-west-1",
        advertisedUrl: "https://queues.example.com",
      },
    });
    expect(parseSqsFlags({ "sqs-listen": "off" }, embedded)).toEqual({
      endpoint: undefined,
      offBecause: "--sqs-listen off",
    });
  });

  it("keeps the default endpoint off on a broker that requires tokens but has no access keys, and refuses it asked for", () => {
    expect(parseSqsFlags({}, { authFile: "auth.json", cluster: false })).toEqual({
      endpoint: undefined,
      offBecause: "--auth-file without --sqs-credentials",
    });
    expect(() => parseSqsFlags({ "sqs-listen": "127.0.0.1:9324" }, { authFile: "auth.json", cluster: false })).toThrow(
      /--sqs-credentials/,
    );
    expect(
      parseSqsFlags({ "sqs-credentials": "keys.json" }, { authFile: "auth.json", cluster: false }).endpoint,
    ).toBeDefined();
  });

  it.each([
    [{ "sqs-credentials": "" }, embedded, /is empty/],
    [{ "sqs-account-id": "12345" }, embedded, /12 digits/],
    [{ "sqs-region": "Not A Region" }, embedded, /region/],
    [{ "sqs-advertised-url": "queues.example.com" }, embedded, /scheme and authority/],
    [{ "sqs-advertised-url": "http://host/path" }, embedded, /scheme and authority/],
    [{ "sqs-credentials": "keys.json" }, { authFile: undefined, cluster: true }, /cluster mode/],
  ])("refuses %j (%j) with a UsageError", (values, context, message) => {
    expect(() => parseSqsFlags(values, context)).toThrow(UsageError);
    expect(() => parseSqsFlags(values, context)).toThrow(message);
  });
});

describe("the listen policy for the SQS endpoint", () => {
  const base = {
    listen: "127.0.0.1:50051",
    authenticated: false,
    grpcClientCertificates: false,
    metricsClientCertificates: false,
    allowUnauthenticatedNetwork: false,
  };

  it("refuses an unsigned endpoint beyond loopback, naming the ways out", () => {
    expect(() => checkListenPolicy({ ...base, sqsListen: "0.0.0.0:9324" })).toThrow(ListenPolicyError);
    expect(() => checkListenPolicy({ ...base, sqsListen: "0.0.0.0:9324" })).toThrow(
      /--sqs-listen 0.0.0.0:9324 .*--sqs-credentials/,
    );
  });

  it("allows it with access keys, client certificates, on loopback, or when told to (and reports it open)", () => {
    expect(checkListenPolicy({ ...base, sqsListen: "0.0.0.0:9324", sqsAuthenticated: true })).toEqual([]);
    expect(checkListenPolicy({ ...base, sqsListen: "0.0.0.0:9324", grpcClientCertificates: true })).toEqual([]);
    expect(checkListenPolicy({ ...base, sqsListen: "127.0.0.1:9324" })).toEqual([]);
    expect(checkListenPolicy({ ...base, sqsListen: "0.0.0.0:9324", allowUnauthenticatedNetwork: true })).toEqual([
      "0.0.0.0:9324",
    ]);
  });
});
