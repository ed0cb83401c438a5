import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findBrokenLinks, githubSlug, headingAnchors } from "./markdown-links.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const markdownFiles = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

describe("links in the README and docs/", () => {
  it.each(markdownFiles)("every relative link and anchor of %s resolves", (file) => {
    const broken = findBrokenLinks(root, file).map((link) => `${link.where}: (${link.target}) ${link.problem}`);
    expect(broken).toEqual([]);
  });
});

describe("the link check itself", () => {
  it("makes anchors as GitHub does", () => {
    expect(githubSlug("Reliability: kill -9 runs")).toBe("reliability-kill--9-runs");
    expect(githubSlug("Dead-letter queues, retry backoff and redrive")).toBe(
      "dead-letter-queues-retry-backoff-and-redrive",
    );
    expect(githubSlug("The broker's `max_in_flight`")).toBe("the-brokers-max_in_flight");
    expect(githubSlug("See [Limits](#limits)")).toBe("see-limits");
    expect([...headingAnchors("# Metrics\n```sh\n# not a heading\n```\n## Metrics\n### Metrics ##\n")]).toEqual([
      "metrics",
      "metrics-1",
      "metrics-2",
    ]);
  });

  it("names a missing file, a missing anchor and a missing anchor in another file, not links in code", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "holdshelf-doc-links-"));
    try {
      writeFileSync(path.join(dir, "other.md"), "# Other\n\n## Real heading\n");
      writeFileSync(
        path.join(dir, "page.md"),
        [
          "# Page",
          "[fine](other.md#real-heading) [fine too](#page) [outside](https://example.com/x.md#nothing)",
          "[gone](missing.md)",
          "[no anchor](#nowhere)",
          "[wrong anchor](other.md#unreal-heading)",
          "`[in a code span](missing.md)`",
          "```md",
          "[in a code block](missing.md)",
          "```",
        ].join("\n"),
      );
      expect(findBrokenLinks(dir, "page.md")).toEqual([
        { where: "page.md:3", target: "missing.md", problem: "missing.md does not exist" },
        { where: "page.md:4", target: "#nowhere", problem: "page.md has no heading with the anchor #nowhere" },
        {
          where: "page.md:5",
          target: "other.md#unreal-heading",
          problem: "other.md has no heading with the anchor #unreal-heading",
        },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
