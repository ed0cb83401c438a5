import { describe, expect, it } from "vitest";
import { isLoopbackAddress } from "../../src/net/loopback-address.js";
import { checkListenPolicy, ListenPolicyError, type ListenPolicyInput } from "../../src/security/listen-policy.js";

describe("isLoopbackAddress", () => {
  it.each([
    "127.0.0.1:50051",
    "127.0.0.1:0",
    "127.0.0.1",
    "127.255.255.254:9464",
    "127.1.2.3:1",
    "localhost:50051",
    "LOCALHOST:50051",
    "localhost",
    "[::1]:50051",
    "[::1]",
    "::1",
    "[0:0:0:0:0:0:0:1]:50051",
    "[::ffff:127.0.0.1]:50051",
    "unix:/run/holdshelf.sock",
    "unix:///run/holdshelf.sock",
    "unix-abstract:holdshelf",
  ])("%s is loopback", (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });

  it.each([
    "0.0.0.0:50051",
    "0.0.0.0",
    "[::]:50051",
    "::",
    "[::ffff:0.0.0.0]:50051",
    "192.168.1.10:50051",
    "10.0.0.1:50051",
    "128.0.0.1:50051",
    "[fe80::1]:50051",
    "[::2]:50051",
    "[::ffff:10.0.0.1]:50051",
    "broker.internal:50051",
    "localhost.example.com:50051",
    "notlocalhost:50051",
    "127.0.0.1.nip.io:50051",
    // Unreadable or ambiguous addresses are never taken for loopback.
    "::1:50051",
    "[::1:50051",
    ":50051",
    "",
    "dns:127.0.0.1:50051",
  ])("%s is not loopback", (address) => {
    expect(isLoopbackAddress(address)).toBe(false);
  });
});

describe("checkListenPolicy", () => {
  const closed: ListenPolicyInput = {
    listen: "127.0.0.1:50051",
    metricsListen: "127.0.0.1:9464",
    authenticated: false,
    grpcClientCertificates: false,
    metricsClientCertificates: false,
    allowUnauthenticatedNetwork: false,
  };
  const check = (change: Partial<ListenPolicyInput>) => () => checkListenPolicy({ ...closed, ...change });

  it("lets loopback listeners start without authentication", () => {
    expect(check({})).not.toThrow();
    expect(check({ listen: "[::1]:0", metricsListen: "localhost:0" })).not.toThrow();
    expect(check({ metricsListen: undefined })).not.toThrow();
  });

  it("refuses an unauthenticated gRPC listener beyond loopback, naming the address and the ways out", () => {
    for (const listen of ["0.0.0.0:50051", "[::]:50051", "192.168.1.10:50051", "broker.internal:50051"]) {
      expect(check({ listen })).toThrow(ListenPolicyError);
      expect(check({ listen })).toThrow(`--listen ${listen} is not a loopback address`);
      expect(check({ listen })).toThrow("--auth-file");
      expect(check({ listen })).toThrow("--allow-unauthenticated-network");
    }
  });

  it("lets gRPC listen beyond loopback with bearer tokens, client certificates, or the explicit flag", () => {
    expect(check({ listen: "0.0.0.0:50051", authenticated: true })).not.toThrow();
    expect(check({ listen: "0.0.0.0:50051", grpcClientCertificates: true })).not.toThrow();
    expect(check({ listen: "0.0.0.0:50051", allowUnauthenticatedNetwork: true })).not.toThrow();
  });

  it("refuses a metrics listener beyond loopback unless scrapers present certificates or the flag is passed", () => {
    // Bearer tokens protect gRPC only: the metrics listener is still open.
    expect(check({ metricsListen: "0.0.0.0:9464", authenticated: true })).toThrow(
      "--metrics-listen 0.0.0.0:9464 is not a loopback address and the metrics listener has no authentication",
    );
    expect(check({ metricsListen: "[::]:9464", grpcClientCertificates: true })).toThrow(ListenPolicyError);
    expect(check({ metricsListen: "0.0.0.0:9464", metricsClientCertificates: true })).not.toThrow();
    expect(check({ metricsListen: "0.0.0.0:9464", allowUnauthenticatedNetwork: true })).not.toThrow();
  });

  it("returns the addresses open only because of the explicit flag, for the broker to warn of", () => {
    const open = (change: Partial<ListenPolicyInput>) =>
      checkListenPolicy({ ...closed, allowUnauthenticatedNetwork: true, ...change });
    expect(open({})).toEqual([]);
    expect(open({ listen: "0.0.0.0:1", metricsListen: "[::]:2" })).toEqual(["0.0.0.0:1", "[::]:2"]);
    expect(open({ listen: "0.0.0.0:1", metricsListen: "[::]:2", authenticated: true })).toEqual(["[::]:2"]);
    expect(
      open({
        listen: "0.0.0.0:1",
        metricsListen: "[::]:2",
        grpcClientCertificates: true,
        metricsClientCertificates: true,
      }),
    ).toEqual([]);
  });

  it("checks gRPC first, so an operator fixing both sees both messages in turn", () => {
    expect(check({ listen: "0.0.0.0:1", metricsListen: "0.0.0.0:2" })).toThrow("--listen 0.0.0.0:1");
    expect(check({ listen: "0.0.0.0:1", metricsListen: "0.0.0.0:2", authenticated: true })).toThrow(
      "--metrics-listen 0.0.0.0:2",
    );
  });
});
