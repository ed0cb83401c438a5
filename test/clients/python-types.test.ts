/**
 * The Python package's type hints hold: Debian's mypy, run --strict with
 * clients/python/pyproject.toml's [tool.mypy] (grpcio and protobuf, which
 * ship no hints, are Any; the generated code is protoc's), finds no error in
 * the package, in examples/python, or in the Python snippets of
 * docs/clients/python.md, which are what users copy.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPython } from "../support/python-package.js";
import { skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const packageDir = join(repoRoot, "clients/python");
const examplesDir = join(repoRoot, "examples/python");
const docs = readFileSync(join(repoRoot, "docs/clients/python.md"), "utf8");
const missing =
  spawnSync(systemPython, ["-m", "mypy", "--version"]).status === 0 ? [] : ["mypy (Debian package: see .ci/run)"];

/**
 * The docs' Python blocks as modules. A fragment (one that imports nothing
 * from holdshelf) uses the names the text around it gives it: everything the
 * package exports, a Client, a receipt handle and a handler.
 */
function docSnippets(): string[] {
  // Blocks inside list items are indented: the indent of the opening fence is taken off every line.
  const blocks = [...docs.matchAll(/^( *)```python\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!.replace(new RegExp(`^${indent}`, "gm"), ""),
  );
  const preamble = [
    "from holdshelf import *  # the names the docs use",
    'client = Client("127.0.0.1:50051")',
    'receipt_handle = "a receipt handle"',
    "def handle(message: ReceivedMessage, ctx: HandlerContext) -> None: ...",
    "",
  ].join("\n");
  return blocks.map((block) => (/^from holdshelf import/m.test(block) ? block : preamble + block));
}

describe.skipIf(skipWithout(missing))("the Python package's type hints", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dir = await makeTempDir("holdshelf-mypy-");
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it("pass mypy --strict for the package, the examples and the docs' snippets", async () => {
    expect(missing, "tools missing").toEqual([]);
    const snippets = docSnippets();
    expect(snippets.length, "the docs' python blocks").toBeGreaterThanOrEqual(6);
    const snippetFiles = await Promise.all(
      snippets.map(async (snippet, i) => {
        const file = join(dir.path, `doc_snippet_${i}.py`);
        await writeFile(file, snippet);
        return file;
      }),
    );
    const examples = readdirSync(examplesDir)
      .filter((name) => name.endsWith(".py"))
      .map((name) => join(examplesDir, name));
    // From the package's directory, so that pyproject.toml's [tool.mypy] applies; the cache stays out of the tree.
    const result = spawnSync(
      systemPython,
      ["-m", "mypy", "--strict", "--cache-dir", join(dir.path, "cache"), "src/holdshelf", ...examples, ...snippetFiles],
      { cwd: packageDir, encoding: "utf8" },
    );
    expect(result.stdout + result.stderr, "mypy's report").toMatch(/^Success: no issues found in \d+ source files/m);
    expect(result.status).toBe(0);
    const checked = Number(/found in (\d+) source files/.exec(result.stdout)![1]);
    expect(checked, "every example and snippet was checked").toBeGreaterThanOrEqual(
      examples.length + snippetFiles.length + 20,
    );
  }, 180_000);
});
