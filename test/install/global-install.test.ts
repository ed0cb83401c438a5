import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import {
  installPackedPackage,
  runInstalled,
  startInstalledBroker,
  stopInstalledBroker,
  type GlobalInstall,
  type InstalledBroker,
} from "../support/global-install.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";

// docs/install.md's steps: the tarball `npm pack` makes, installed with
// `npm install -g` into a prefix, run as `holdshelf` from a directory outside
// the clone; the systemd unit and the container recipe of deploy/ around it.

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const missingSystemd = missingCommands(["systemd-analyze"]);

/** The lines of one JSON object each that the CLI printed. */
function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A `[Service]` section's settings, each key with its values in order (a key may repeat). */
function serviceSettings(unit: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const line of unit.split("\n")) {
    const header = /^\[(.+)\]$/.exec(line);
    if (header) section = header[1]!;
    const setting = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (section === "Service" && setting)
      settings.set(setting[1]!, [...(settings.get(setting[1]!) ?? []), setting[2]!]);
  }
  return settings;
}

/** A Containerfile's instructions, continuation lines joined and comments left out. */
function instructions(containerfile: string): { readonly keyword: string; readonly args: string }[] {
  return containerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword, ...rest] = line.trim().split(/\s+/);
      return { keyword: keyword!, args: rest.join(" ") };
    });
}

describe("the package installed globally from its tarball", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let install: GlobalInstall;
  const brokers: InstalledBroker[] = [];

  beforeAll(async () => {
    dir = await makeTempDir("holdshelf-global-install-");
    install = await installPackedPackage(dir.path);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(brokers.map(stopInstalledBroker));
    await dir?.remove();
  });

  it("carries the built command, library, console, proto and deploy/, and none of the clone's sources, tests or source maps", () => {
    const paths = install.files.map((file) => file.path);
    for (const needed of [
      "package.json",
      "README.md",
      "LICENSE",
      "bin/holdshelf.js",
      "dist/src/cli/main.js",
      "dist/src/index.js",
      "dist/src/index.d.ts",
      "dist/console/index.html",
      "proto/holdshelf/v1/queue_service.proto",
      "deploy/holdshelf.service",
      "deploy/Containerfile",
    ])
      expect(paths).toContain(needed);
    expect(paths.some((path) => /^dist\/console\/assets\/.+\.js$/.test(path))).toBe(true);
    const outside = paths.filter(
      (path) =>
        !["package.json", "README.md", "LICENSE"].includes(path) &&
        !/^(bin|proto|deploy)\//.test(path) &&
        !/^dist\/(src|gen|console)\//.test(path),
    );
    expect(outside).toEqual([]);
    expect(paths.filter((path) => path.endsWith(".map") || path.endsWith(".test.js"))).toEqual([]);
    // 0.5 MB today: a tenfold jump means something was swept in by mistake.
    expect(install.size).toBeLessThan(2_000_000);
  });

  it("serves from another directory and runs the README walkthrough: queues, messages, metrics and the console", async () => {
    const consolePort = await freePort();
    const broker = await startInstalledBroker(install, [
      "--data-dir",
      join(dir.path, "data"),
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      "127.0.0.1:0",
      "--sqs-listen",
      "off",
      "--console-listen",
      `127.0.0.1:${consolePort}`,
    ]);
    brokers.push(broker);
    const env = { HOLDSHELF_ADDRESS: String(broker.listening["address"]) };
    const cli = async (...args: string[]) => {
      const result = await runInstalled(install, args, env);
      expect(result, result.stderr).toMatchObject({ code: 0 });
      return jsonLines(result.stdout);
    };

    await cli("queue", "create", "jobs", "--visibility-timeout", "30s");
    const [sent] = await cli("send", "jobs", "resize photo 42", "--attribute", "kind=resize");
    const [received] = await cli("receive", "jobs", "--max", "10", "--wait", "20s");
    expect(received).toMatchObject({
      messageId: sent!["messageId"],
      body: "resize photo 42",
      attributes: { kind: "resize" },
      receiveCount: 1,
    });
    expect((await cli("queue", "get", "jobs"))[0]!["stats"]).toMatchObject({ visible: 0, inFlight: 1 });
    const metrics = await (await fetch(`http://${String(broker.listening["metricsAddress"])}/metrics`)).text();
    expect(metrics).toContain('holdshelf_messages{queue="jobs",state="in_flight"} 1');
    expect(metrics).toContain('holdshelf_messages_received_total{queue="jobs"} 1');
    await cli("delete", "jobs", String(received!["receiptHandle"]));
    expect((await cli("queue", "get", "jobs"))[0]!["stats"]).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });

    // The console's page and the bundle it loads, from the installed package's dist/console.
    const page = await fetch(`http://127.0.0.1:${consolePort}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /<script[^>]+src="\.?(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const bundle = await fetch(`http://127.0.0.1:${consolePort}${script}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");

    expect((await runInstalled(install, ["help"])).stdout).toContain("serve");
    expect(await stopInstalledBroker(broker)).toBe(0);
  }, 60_000);

  describe.skipIf(skipWithout(missingSystemd))("deploy/holdshelf.service", () => {
    const unit = readFileSync(join(root, "deploy/holdshelf.service"), "utf8");

    /** `systemd-analyze verify` of the unit with its ExecStart's command at `command`. */
    async function verify(command: string): Promise<{ code: number; output: string }> {
      const copy = join(dir.path, "holdshelf.service");
      await writeFile(copy, unit.replace("ExecStart=/usr/local/bin/holdshelf ", `ExecStart=${command} `));
      try {
        const { stdout, stderr } = await run("systemd-analyze", ["verify", copy]);
        return { code: 0, output: stdout + stderr };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, output: failed.stdout + failed.stderr };
      }
    }

    it("passes systemd-analyze verify with ExecStart at the installed command, and fails it at a missing one", async () => {
      expect(serviceSettings(unit).get("ExecStart")).toEqual(["/usr/local/bin/holdshelf serve"]);
      // verify only warns (exit 0) about unknown settings: any output is a failure.
      expect(await verify(join(install.prefix, "bin/holdshelf"))).toEqual({ code: 0, output: "" });
      const missing = await verify(join(install.prefix, "bin/no-such-command"));
      expect(missing.code).not.toBe(0);
      expect(missing.output).toContain("no-such-command");
    });

    it("runs as its own user with the hardening a broker needs, and leaves the drain its time", () => {
      const settings = serviceSettings(unit);
      const one = (key: string) => settings.get(key)?.join(" ");
      expect(one("User")).toBe("holdshelf");
      expect(one("StateDirectory")).toBe("holdshelf");
      expect(settings.get("Environment")).toContain("HOLDSHELF_DATA_DIR=%S/holdshelf");
      expect(one("EnvironmentFile")).toBe("-/etc/holdshelf/holdshelf.env");
      for (const [key, value] of [
        ["ProtectSystem", "strict"],
        ["ProtectHome", "yes"],
        ["PrivateTmp", "yes"],
        ["NoNewPrivileges", "yes"],
        ["CapabilityBoundingSet", ""],
        ["RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"],
        ["SystemCallFilter", "@system-service"],
        ["KillSignal", "SIGTERM"],
        ["Restart", "on-failure"],
        ["RestartPreventExitStatus", "3"],
        ["ExecReload", "/bin/kill -HUP $MAINPID"],
      ])
        expect([key, one(key!)]).toEqual([key, value]);
      // V8's JIT needs writable, then executable, memory.
      expect(settings.has("MemoryDenyWriteExecute")).toBe(false);
      expect(Number(one("LimitNOFILE"))).toBeGreaterThanOrEqual(65_536);
      // The broker gives calls in progress 10 s after SIGTERM, then closes the store.
      expect(one("TimeoutStopSec")).toMatch(/^\d+s$/);
      expect(Number.parseInt(one("TimeoutStopSec")!, 10)).toBeGreaterThanOrEqual(20);
    });
  });

  describe("deploy/Containerfile's settings", () => {
    const steps = instructions(readFileSync(join(root, "deploy/Containerfile"), "utf8"));
    const imageEnv: Record<string, string> = Object.fromEntries(
      steps
        .filter((step) => step.keyword === "ENV")
        .flatMap((step) => step.args.split(/\s+/))
        .map((pair) => pair.split("=", 2) as [string, string]),
    );

    /** The image's environment for a broker on this machine: its listeners' ports free ones, its data directory a temporary one. */
    async function localEnv(metricsPort: number): Promise<Record<string, string>> {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(imageEnv))
        env[key] = /^0\.0\.0\.0:\d+$/.test(value) ? `0.0.0.0:${await freePort()}` : value;
      return {
        ...env,
        HOLDSHELF_DATA_DIR: join(dir.path, "image-data"),
        HOLDSHELF_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      };
    }

    it("installs the tarball as the tests do, on Node 24, and runs `holdshelf serve` as a user of its own", () => {
      expect(steps[0]).toEqual({ keyword: "FROM", args: "node:24-slim" });
      expect(steps.find((step) => step.keyword === "RUN")?.args).toMatch(
        /^npm install -g --no-audit --no-fund \/tmp\/holdshelf\.tgz /,
      );
      expect(steps.find((step) => step.keyword === "USER")?.args).toBe("holdshelf");
      expect(steps.find((step) => step.keyword === "VOLUME")?.args).toBe(imageEnv["HOLDSHELF_DATA_DIR"]);
      expect(steps.find((step) => step.keyword === "ENTRYPOINT")?.args).toBe('["holdshelf"]');
      expect(steps.find((step) => step.keyword === "CMD")?.args).toBe('["serve"]');
      expect(imageEnv).toMatchObject({ HOLDSHELF_LISTEN: "0.0.0.0:50051", HOLDSHELF_CONSOLE_LISTEN: "0.0.0.0:9465" });
    });

    it("refuses to start without a way to authenticate callers, and with tokens serves, answers its health check and stops on SIGTERM", async () => {
      const metricsPort = await freePort();
      const env = await localEnv(metricsPort);
      const refused = await runInstalled(install, ["serve"], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `"reason":"--listen ${env["HOLDSHELF_LISTEN"]} is not a loopback address and callers are not authenticated`,
      );

      const token = "hs_install-test-token";
      const authFile = join(dir.path, "tokens.json");
      const entry = {
        name: "ops",
        sha256: createHash("sha256").update(token).digest("hex"),
        permissions: [{ queues: "*", allow: ["admin", "send", "receive"] }],
      };
      await writeFile(authFile, JSON.stringify({ tokens: [entry] }));
      const broker = await startInstalledBroker(install, [], { ...env, HOLDSHELF_AUTH_FILE: authFile });
      brokers.push(broker);
      expect(broker.listening).toMatchObject({ address: env["HOLDSHELF_LISTEN"], auth: "tokens", sqsAddress: "off" });
      const grpcPort = env["HOLDSHELF_LISTEN"]!.split(":")[1]!;
      const asUser = { HOLDSHELF_ADDRESS: `127.0.0.1:${grpcPort}` };
      expect((await runInstalled(install, ["queue", "list"], asUser)).code).not.toBe(0);
      const listed = await runInstalled(install, ["queue", "list"], { ...asUser, HOLDSHELF_TOKEN: token });
      expect(listed, listed.stderr).toMatchObject({ code: 0 });

      const healthcheck = steps.find((step) => step.keyword === "HEALTHCHECK")!.args;
      const command = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD ") + 4)) as string[];
      expect(command[0]).toBe("node");
      const probe = command.map((arg) => arg.replace("127.0.0.1:9464", `127.0.0.1:${metricsPort}`));
      await expect(run(process.execPath, probe.slice(1))).resolves.toBeDefined();
      const consolePort = env["HOLDSHELF_CONSOLE_LISTEN"]!.split(":")[1]!;
      expect((await fetch(`http://127.0.0.1:${consolePort}/`)).status).toBe(200);

      expect(await stopInstalledBroker(broker)).toBe(0);
      await expect(run(process.execPath, probe.slice(1))).rejects.toMatchObject({ code: 1 });
    }, 60_000);
  });
});
