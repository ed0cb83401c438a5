import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Edge, importsOf, root, sourceFiles } from "./import-graph.js";

// The house rules of docs/development.md ("Layers"), as a check. Each folder
// of src/ names the folders it may import; a folder not named here may not be
// imported at all, and a new folder fails until it has a row. The rows are
// written top floor first, and a floor imports only the floors below it: the
// map itself must have no cycle (checked below), so no import runs back up.
// `index` is src/index.ts, the package's entry; `gen` is the generated code,
// which only the rows that speak the proto name: the rules, storage, cluster
// membership, auth and metrics have types of their own.
const bottom = ["protocol", "time", "logging", "errors"] as const;
const mayImport: Readonly<Record<string, readonly string[]>> = {
  index: ["client"],
  cli: ["server", "cluster", "store", "client", "security", "auth", "net", ...bottom, "gen"],
  server: [
    "grpc",
    "sqs",
    "console",
    "metrics",
    "service",
    "cluster",
    "auth",
    "broker",
    "store",
    "security",
    "net",
    ...bottom,
    "gen",
  ],
  grpc: ["service", "cluster", "auth", "broker", "security", "net", ...bottom, "gen"],
  sqs: ["service", "metrics", "auth", "security", "net", ...bottom, "gen"],
  console: ["service", "metrics", "auth", "security", "net", ...bottom, "gen"],
  metrics: ["broker", "store", "security", "net", ...bottom],
  service: ["cluster", "auth", "broker", ...bottom, "gen"],
  auth: [...bottom],
  cluster: ["store", "net", ...bottom],
  broker: ["store", ...bottom],
  store: ["protocol", "time", "logging", "errors"],
  security: ["net", "logging", "errors"],
  client: ["net", "protocol", "time", "gen"],
  net: [],
  errors: ["protocol"],
  protocol: ["gen", "time"],
  time: [],
  logging: [],
  gen: [],
};

// Imports the map does not allow, kept on purpose: each names its file, the
// room it reaches and why.
const keptImports: readonly { readonly file: string; readonly room: string; readonly why: string }[] = [
  {
    file: "src/console/queue-history.ts",
    room: "broker",
    why: "the console's charts listen to the rules' events (BrokerEvents), as metrics/ does; the server tees the events to both",
  },
];

// Packages with a native part or a server-side purpose stay in their rooms:
// the client package and the CLI's client commands must not load them.
const packageRooms: readonly { readonly pattern: RegExp; readonly rooms: readonly string[] }[] = [
  { pattern: /^classic-level$/, rooms: ["store"] },
  { pattern: /^pg$/, rooms: ["store", "cluster", "cli"] },
  { pattern: /^prom-client$/, rooms: ["metrics", "server"] },
];

// File cycles that are kept on purpose. Each is the sorted list of its files.
// None now: the Consumer's slice of QueueClient is spelled out (ConsumerClient), so QueueClient alone imports the other.
const keptCycles: readonly { readonly files: readonly string[]; readonly why: string }[] = [];

/** The room (folder of src/) a repository path belongs to. */
function roomOf(file: string): string {
  if (file.startsWith("gen/")) return "gen";
  if (file === "src/index.ts") return "index";
  return file.split("/")[1]!;
}

/** Each import between rooms that the map does not allow, as "from -> to: why". */
function layerViolations(edges: readonly Edge[]): string[] {
  const violations: string[] = [];
  for (const edge of edges) {
    const from = roomOf(edge.from);
    if (edge.file === undefined) {
      const rule = packageRooms.find(({ pattern }) => pattern.test(edge.specifier));
      if (rule !== undefined && !rule.rooms.includes(from)) {
        violations.push(`${edge.from} -> "${edge.specifier}": only ${rule.rooms.join(", ")} may import it`);
      }
      continue;
    }
    const to = roomOf(edge.file);
    if (to === from) continue;
    if ((mayImport[from] ?? []).includes(to)) continue;
    if (keptImports.some((kept) => kept.file === edge.from && kept.room === to)) continue;
    violations.push(`${edge.from} -> ${edge.file}: ${from}/ may not import ${to}/`);
  }
  return violations;
}

/** The strongly connected groups of more than one file (Tarjan's algorithm), each sorted. */
function fileCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack.delete(member);
        group.push(member);
        if (member === file) break;
      }
      if (group.length > 1) cycles.push(group.sort());
    }
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const files = sourceFiles("src");
const edges = files.flatMap(importsOf);
const graph = new Map(
  files.map((file) => [file, importsOf(file).flatMap((edge) => (edge.file === undefined ? [] : [edge.file]))]),
);

describe("the layers of src/", () => {
  it("has no import that the folder map does not allow", () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it("names every folder of src/ in the map, and no folder that is gone", () => {
    const rooms = readdirSync(join(root, "src"))
      .filter((name) => statSync(join(root, "src", name)).isDirectory())
      .sort();
    expect(
      Object.keys(mayImport)
        .filter((room) => !["index", "gen"].includes(room))
        .sort(),
    ).toEqual(rooms);
  });

  it("is layered: the map has no cycle, so no import can run back up", () => {
    const rooms = new Map(Object.entries(mayImport));
    expect(fileCycles(rooms)).toEqual([]);
  });

  it("has no file cycles other than the ones kept on purpose", () => {
    expect(fileCycles(graph)).toEqual(keptCycles.map(({ files }) => [...files].sort()));
  });

  it("catches an import against the map, a package out of its room, and a cycle", () => {
    // Guards the checks themselves, on made-up edges.
    const made: Edge[] = [
      { from: "src/store/x.ts", specifier: "../broker/y.js", file: "src/broker/y.ts" },
      { from: "src/client/x.ts", specifier: "classic-level", file: undefined },
      { from: "src/broker/y.ts", specifier: "../store/x.js", file: "src/store/x.ts" },
    ];
    expect(layerViolations(made)).toEqual([
      "src/store/x.ts -> src/broker/y.ts: store/ may not import broker/",
      'src/client/x.ts -> "classic-level": only store may import it',
    ]);
    const cyclic = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(fileCycles(cyclic)).toEqual([["a", "b", "c"]]);
  });
});
