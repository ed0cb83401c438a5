import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startJsonLines } from "../support/json-lines-process.js";
import { missingCommands } from "../support/required-tools.js";
import { describeConsumerConformance, repoRoot } from "./consumer-conformance.js";

describeConsumerConformance({
  name: "Go",
  missingTools: missingCommands(["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"]),
  async prepare() {
    // Generates the Go code and builds the Go programs; Go's build cache makes reruns quick.
    await promisify(execFile)("bash", [`${repoRoot}examples/build.sh`], { cwd: repoRoot });
    const worker = `${repoRoot}.build/bin/go-conformance-worker`;
    return { start: (args) => startJsonLines(worker, args), dispose: async () => undefined };
  },
});
