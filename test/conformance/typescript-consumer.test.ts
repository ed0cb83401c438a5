import { existsSync } from "node:fs";
import { startJsonLines } from "../support/json-lines-process.js";
import { describeConsumerConformance, repoRoot } from "./consumer-conformance.js";

// The worker runs on the compiled package, which `npm test` builds first.
describeConsumerConformance({
  name: "TypeScript",
  missingTools: existsSync(`${repoRoot}dist/src/index.js`) ? [] : ["dist/ (npm run build)"],
  async prepare() {
    const worker = `${repoRoot}test/conformance/workers/typescript-worker.mjs`;
    return { start: (args) => startJsonLines(process.execPath, [worker, ...args]), dispose: async () => undefined };
  },
});
