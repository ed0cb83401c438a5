import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

// The suites that drive a real broker over gRPC run a second time with the
// broker on PostgreSQL (cluster mode's store), and a third time against a
// cluster of three brokers whose client talks to one that owns no shards
// (test/support/test-storage.ts). Where PostgreSQL is not installed those
// runs are left out, except in CI, which installs it (.ci/run) and must
// fail rather than skip.
const onEveryStore = [
  "test/grpc/**/*.test.ts",
  "test/client/**/*.test.ts",
  "test/sqs/sdk-*.test.ts",
  // AWS's recorded answers, on both protocols (docs/sqs.md).
  "test/sqs/conformance/**/*.test.ts",
];
const postgresRun = existsSync("/usr/lib/postgresql") || process.env.CI !== undefined;
// There every commit is an fsync'd round trip to PostgreSQL, and test files
// run side by side: a test that makes thousands of them (server-heartbeat's
// flow control: 3 s alone, 15 s in the cluster run on a loaded machine) gets
// a longer guard against hangs than the LevelDB run's.
const postgresTestTimeout = 60_000;

// The fast tier (`npm run test:fast`, vitest's `--mode fast`): the units,
// the broker's rules, the store contract on the memory and LevelDB stores
// and the gRPC server, all in process and on LevelDB, with no build, no
// PostgreSQL and no other language's toolchain.
const fastTier = [
  "test/unit/**/*.test.ts",
  "test/broker/**/*.test.ts",
  "test/store/**/*.test.ts",
  "test/grpc/**/*.test.ts",
];
const notFast = [...configDefaults.exclude, "test/store/postgres-*.test.ts"];

export default defineConfig(({ mode }) => ({
  test: {
    // classic-level is a native addon: separate processes are the safe pool for it.
    pool: "forks",
    // One test file per core, rather than vitest's one fewer: most files
    // wait on brokers, servers and child processes more than they compute,
    // and on two cores vitest's default would run one file at a time.
    maxWorkers: availableParallelism(),
    testTimeout: 20_000,
    // Brokers the tests spawn leave the console's fixed default port alone
    // (tests run side by side); the tests of the console pass an address.
    env: { HOLDSHELF_CONSOLE_LISTEN: "off" },
    hookTimeout: 20_000,
    // PostgreSQL servers copy one initdb per project (test/support/postgres-templates.ts).
    globalSetup: ["test/support/postgres-templates.ts"],
    projects:
      mode === "fast"
        ? [{ extends: true as const, test: { name: "fast", include: fastTier, exclude: notFast } }]
        : [
            { extends: true as const, test: { name: "leveldb", include: ["test/**/*.test.ts"] } },
            ...(postgresRun
              ? [
                  {
                    extends: true as const,
                    test: {
                      name: "postgres",
                      include: onEveryStore,
                      env: { HOLDSHELF_TEST_STORE: "postgres" },
                      testTimeout: postgresTestTimeout,
                    },
                  },
                  {
                    extends: true as const,
                    // The consumer conformance suite runs here too: each language's Consumer against a cluster.
                    test: {
                      name: "cluster",
                      include: [...onEveryStore, "test/conformance/**/*.test.ts"],
                      env: { HOLDSHELF_TEST_STORE: "cluster" },
                      testTimeout: postgresTestTimeout,
                    },
                  },
                ]
              : []),
          ],
  },
}));
