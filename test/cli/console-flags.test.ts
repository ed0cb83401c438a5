import { describe, expect, it } from "vitest";
import { consoleDefaultListen, consoleFlagOptions, parseConsoleFlags } from "../../src/cli/console-flags.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { checkListenPolicy, ListenPolicyError } from "../../src/security/listen-policy.js";

describe("the console's flag", () => {
  it("listens on loopback port 9465 by default, takes an address or its environment variable, and turns off", () => {
    expect(consoleFlagOptions({})["console-listen"].default).toBe(consoleDefaultListen);
    expect(consoleDefaultListen).toBe("127.0.0.1:9465");
    expect(consoleFlagOptions({ HOLDSHELF_CONSOLE_LISTEN: "127.0.0.1:8080" })["console-listen"].default).toBe(
      "127.0.0.1:8080",
    );
    expect(parseConsoleFlags({ "console-listen": "[::1]:9465" })).toBe("[::1]:9465");
    expect(parseConsoleFlags({ "console-listen": "off" })).toBeUndefined();
  });

  it("refuses an empty value rather than guess", () => {
    expect(() => parseConsoleFlags({ "console-listen": "" })).toThrow(UsageError);
    expect(() => parseConsoleFlags({ "console-listen": "" })).toThrow(/HOLDSHELF_CONSOLE_LISTEN/);
  });
});

describe("the listen policy for the console", () => {
  const base = {
    listen: "127.0.0.1:50051",
    authenticated: false,
    grpcClientCertificates: false,
    metricsClientCertificates: false,
    allowUnauthenticatedNetwork: false,
  };

  it("refuses a console without sign-in beyond loopback, naming the ways out", () => {
    expect(() => checkListenPolicy({ ...base, consoleListen: "0.0.0.0:9465" })).toThrow(ListenPolicyError);
    expect(() => checkListenPolicy({ ...base, consoleListen: "0.0.0.0:9465" })).toThrow(
      /--console-listen 0.0.0.0:9465 .*--auth-file/,
    );
  });

  it("allows it with tokens, client certificates, on loopback, or when told to (and reports it open)", () => {
    expect(checkListenPolicy({ ...base, authenticated: true, consoleListen: "0.0.0.0:9465" })).toEqual([]);
    expect(checkListenPolicy({ ...base, grpcClientCertificates: true, consoleListen: "0.0.0.0:9465" })).toEqual([]);
    expect(checkListenPolicy({ ...base, consoleListen: "127.0.0.1:9465" })).toEqual([]);
    expect(checkListenPolicy({ ...base, consoleListen: "0.0.0.0:9465", allowUnauthenticatedNetwork: true })).toEqual([
      "0.0.0.0:9465",
    ]);
  });
});
