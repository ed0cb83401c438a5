import { startJsonLines } from "../support/json-lines-process.js";
import { installPythonPackage, missingPythonTools } from "../support/python-package.js";
import { describeConsumerConformance, repoRoot } from "./consumer-conformance.js";

// The package goes into a fresh venv over Debian's interpreter and grpcio
// (--system-site-packages), as a user installs it.
describeConsumerConformance({
  name: "Python",
  missingTools: missingPythonTools(),
  async prepare() {
    const venv = await installPythonPackage();
    const worker = `${repoRoot}test/conformance/workers/python_worker.py`;
    return { start: (args) => startJsonLines(venv.python, ["-u", worker, ...args]), dispose: () => venv.remove() };
  },
});
