import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect } from "vitest";
import { makeTempDir } from "../support/temp-dir.js";

const run = promisify(execFile);

/** Paths of throwaway PEM files made for one test run; nothing here is committed. */
export interface TestCerts {
  readonly dir: string;
  /** Two unrelated CAs: A issued every certificate below except clientB. */
  readonly caA: string;
  readonly caB: string;
  /** A server certificate for 127.0.0.1, ::1 and localhost, issued by CA A. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** A broker's certificate for 127.0.0.1, issued by CA A for both ends of a call: what brokers of a cluster forward with. */
  readonly brokerCert: string;
  readonly brokerKey: string;
  /** A client certificate issued by CA A, and one issued by CA B. */
  readonly clientACert: string;
  readonly clientAKey: string;
  readonly clientBCert: string;
  readonly clientBKey: string;
  /** The contents of every private key, to check that none leaks into output. */
  readonly keyContents: readonly string[];
}

/**
 * Test certificates for one describe block: made in a temporary directory
 * before its tests (the returned object is filled in then) and removed after.
 */
export function useTestCerts(missingTools: readonly string[]): TestCerts {
  const certs = {} as { -readonly [K in keyof TestCerts]: TestCerts[K] };
  let remove: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    expect(missingTools, "openssl is needed to make test certificates").toEqual([]);
    const dir = await makeTempDir();
    remove = () => dir.remove();
    Object.assign(certs, await makeTestCerts(dir.path));
  }, 60_000);
  afterAll(async () => {
    await remove?.();
  });
  return certs;
}

/** Makes two CAs, a server certificate and a client certificate from each CA with the openssl CLI (EC P-256, valid one day). */
export async function makeTestCerts(dir: string): Promise<TestCerts> {
  const path = (name: string) => join(dir, name);
  await makeCa(path("ca-a"), "holdshelf test CA A");
  await makeCa(path("ca-b"), "holdshelf test CA B");
  await issue(
    path("server"),
    path("ca-a"),
    "localhost",
    "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  await issue(path("client-a"), path("ca-a"), "client-a", "extendedKeyUsage=clientAuth\n");
  await issue(
    path("broker"),
    path("ca-a"),
    "broker",
    "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n",
  );
  await issue(path("client-b"), path("ca-b"), "client-b", "extendedKeyUsage=clientAuth\n");
  const keys = ["ca-a", "ca-b", "server", "broker", "client-a", "client-b"].map((name) => path(`${name}.key`));
  return {
    dir,
    caA: path("ca-a.crt"),
    caB: path("ca-b.crt"),
    serverCert: path("server.crt"),
    serverKey: path("server.key"),
    brokerCert: path("broker.crt"),
    brokerKey: path("broker.key"),
    clientACert: path("client-a.crt"),
    clientAKey: path("client-a.key"),
    clientBCert: path("client-b.crt"),
    clientBKey: path("client-b.key"),
    keyContents: await Promise.all(keys.map((key) => readFile(key, "utf8"))),
  };
}

/**
 * A server certificate for one IP address more (this machine's LAN address, say), issued by CA A of
 * certs, or by `ca`; `usage` "serverAuth,clientAuth" makes a broker's, for both ends of a forwarded call.
 */
export async function issueServerCert(
  certs: TestCerts,
  name: string,
  ip: string,
  ca: string = certs.caA,
  usage = "serverAuth",
): Promise<{ cert: string; key: string }> {
  const base = join(certs.dir, name);
  await issue(base, ca.replace(/\.crt$/, ""), name, `subjectAltName=IP:${ip}\nextendedKeyUsage=${usage}\n`);
  return { cert: `${base}.crt`, key: `${base}.key` };
}

const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

async function makeCa(base: string, name: string): Promise<void> {
  await run("openssl", [
    "req",
    "-x509",
    ...newKey,
    "-keyout",
    `${base}.key`,
    "-out",
    `${base}.crt`,
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
  ]);
}

async function issue(base: string, ca: string, commonName: string, extensions: string): Promise<void> {
  await run("openssl", [
    "req",
    ...newKey,
    "-keyout",
    `${base}.key`,
    "-out",
    `${base}.csr`,
    "-subj",
    `/CN=${commonName}`,
  ]);
  await writeFile(`${base}.ext`, `basicConstraints=CA:FALSE\n${extensions}`);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    `${base}.csr`,
    "-CA",
    `${ca}.crt`,
    "-CAkey",
    `${ca}.key`,
    "-set_serial",
    String(Date.now()),
    "-days",
    "1",
    "-extfile",
    `${base}.ext`,
    "-out",
    `${base}.crt`,
  ]);
}

/** Reads a PEM file as grpc-js and node:https take it. */
export function pem(file: string): Promise<Buffer> {
  return readFile(file);
}
