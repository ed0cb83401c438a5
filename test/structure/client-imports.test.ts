import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, root } from "./import-graph.js";

// The TypeScript client ships alone as @holdshelf/client (packages/client),
// with only grpc-js and protobuf-es as dependencies. So everything it reaches
// must be client code or code both sides share: no wire handlers, auth,
// security, rules, storage, server or metrics, whose imports (classic-level,
// prom-client) would break that package at run time.
const sharedFolders = ["src/client/", "src/protocol/", "src/time/", "src/net/", "gen/"];
const allowedPackages = [/^@grpc\/grpc-js$/, /^@bufbuild\/protobuf(\/.*)?$/, /^node:/];

/**
 * Walks the import graph from each entry in turn (a file an earlier entry
 * reached is not walked again, so chains start at the first entry); returns
 * each import that leaves the shared folders or names a package the client
 * does not depend on, with the chain of files that leads to it.
 */
function clientImportViolations(entries: readonly string[]): string[] {
  const parent = new Map<string, string | undefined>();
  const violations: string[] = [];
  const chain = (file: string): string[] => {
    const path = [file];
    for (let up = parent.get(file); up !== undefined; up = parent.get(up)) path.unshift(up);
    return path;
  };
  for (const entry of entries) {
    if (parent.has(entry)) continue;
    parent.set(entry, undefined);
    const queue = [entry];
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      for (const edge of importsOf(file)) {
        if (edge.file === undefined) {
          if (!allowedPackages.some((pattern) => pattern.test(edge.specifier))) {
            violations.push(
              `${[...chain(file), `"${edge.specifier}"`].join(" -> ")}: the client may only import @grpc/grpc-js, @bufbuild/protobuf and node: builtins`,
            );
          }
          continue;
        }
        if (parent.has(edge.file)) continue;
        parent.set(edge.file, file);
        if (!sharedFolders.some((folder) => edge.file!.startsWith(folder))) {
          violations.push(`${chain(edge.file).join(" -> ")}: outside ${sharedFolders.join(", ")}`);
          continue;
        }
        queue.push(edge.file);
      }
    }
  }
  return violations;
}

function clientFiles(): string[] {
  return readdirSync(join(root, "src/client"))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `src/client/${name}`);
}

describe("the client's import graph", () => {
  it("reaches only client and shared code, and only the client package's dependencies", () => {
    expect(clientImportViolations(["src/client/index.ts", ...clientFiles()])).toEqual([]);
  });

  it("is what the root package exports: src/index.ts re-exports the client and nothing else", () => {
    expect(importsOf("src/index.ts").map((edge) => edge.file)).toEqual(["src/client/index.ts"]);
  });

  it("names the chain of an import that leaves the shared folders", () => {
    // Guards the walker itself: the server's entry reaches storage through the broker.
    const violations = clientImportViolations(["src/server/holdshelf-server.ts"]);
    expect(
      violations.some((line) => /^src\/server\/holdshelf-server\.ts -> src\/(\w+\/)+[\w-]+\.ts: outside /.test(line)),
    ).toBe(true);
  });
});
