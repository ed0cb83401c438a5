/**
 * The proto contract against the last released one (releases/*.binpb): the
 * current proto has no breaking change, and the check does catch one.
 */
import { execFile } from "node:child_process";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTempDir } from "../support/temp-dir.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const releasedImage = join(repoRoot, "releases/holdshelf-proto-0.1.0.binpb");
const buf = join(repoRoot, "node_modules/.bin/buf");

/** Runs `buf breaking` in a directory holding buf.yaml and proto/; resolves with its exit code and output. */
async function breaking(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(buf, ["breaking", "--against", releasedImage], { cwd: dir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe("the proto contract", () => {
  it("has no breaking change since the last release", async () => {
    expect(await breaking(repoRoot)).toEqual({ code: 0, output: "" });
  });

  it("is caught breaking when a field is renamed or renumbered", async () => {
    const dir = await makeTempDir("holdshelf-proto-");
    try {
      await cp(join(repoRoot, "proto"), join(dir.path, "proto"), { recursive: true });
      await cp(join(repoRoot, "buf.yaml"), join(dir.path, "buf.yaml"));
      const file = join(dir.path, "proto/holdshelf/v1/queue_service.proto");
      const source = await readFile(file, "utf8");
      const changed = source.replace(
        /message DeleteRequest \{([^}]*?)string receipt_handle = 2;/,
        "message DeleteRequest {$1string handle = 3;",
      );
      expect(changed).not.toBe(source);
      await writeFile(file, changed);

      const result = await breaking(dir.path);
      expect(result.code).not.toBe(0);
      expect(result.output).toContain(
        'Previously present field "2" with name "receipt_handle" on message "DeleteRequest" was deleted',
      );
    } finally {
      await dir.remove();
    }
  });
});
