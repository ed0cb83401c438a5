import { spawnSync } from "node:child_process";
import { startJsonLines } from "../support/json-lines-process.js";
import { installPythonPackage } from "../support/python-package.js";
import { missingCommands } from "../support/required-tools.js";
import { describeConsumerConformance, repoRoot } from "./consumer-conformance.js";

// Debian's interpreter, the one python3-grpcio is installed for; the package
// goes into a fresh venv that sees it (--system-site-packages).
const missingTools = missingCommands(["protoc", "grpc_python_plugin"]);
if (spawnSync("/usr/bin/python3", ["-c", "import grpc, venv, setuptools, wheel"]).status !== 0) {
  missingTools.push("python3-grpcio, python3-venv, python3-setuptools, python3-wheel");
}

describeConsumerConformance({
  name: "Python",
  missingTools,
  async prepare() {
    const venv = await installPythonPackage();
    const worker = `${repoRoot}test/conformance/workers/python_worker.py`;
    return { start: (args) => startJsonLines(venv.python, ["-u", worker, ...args]), dispose: () => venv.remove() };
  },
});
