// A vitest reporter that prints where the suite's time went once it ends:
// each project's total, and the slowest test files with their project.
// `.ci/run` adds it to `npm test`, to keep the suite inside its time
// budget (docs/development.md, Tests); any run can add it with
// `--reporter=default --reporter=./.ci/test-times.mjs`.
import { relative } from "node:path";

/** How many of the slowest files it lists. */
const slowestShown = 20;

/** Prints each project's time and the slowest test files when the run ends. */
export default class TestTimes {
  onInit(vitest) {
    this.root = vitest.config.root;
    this.startedAt = performance.now();
  }

  onTestRunEnd(testModules) {
    // A file's time: importing it, its setup files, and its tests and hooks; the files of a project run side by side.
    const files = testModules.map((module) => {
      const { prepareDuration, collectDuration, setupDuration, duration } = module.diagnostic();
      const project = module.project.name || "(root)";
      return {
        project,
        file: relative(this.root, module.moduleId),
        ms: prepareDuration + collectDuration + setupDuration + duration,
      };
    });
    const projects = new Map();
    for (const { project, ms } of files) {
      const total = projects.get(project) ?? { ms: 0, files: 0 };
      projects.set(project, { ms: total.ms + ms, files: total.files + 1 });
    }
    const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(9);
    const lines = [
      `--- test times: ${seconds(performance.now() - this.startedAt).trim()} wall clock; each project's files, summed over the workers`,
    ];
    for (const [project, { ms, files: count }] of [...projects].sort((a, b) => b[1].ms - a[1].ms)) {
      lines.push(`${seconds(ms)}  ${project} (${count} files)`);
    }
    lines.push(`--- the ${slowestShown} slowest test files`);
    for (const { project, file, ms } of files.sort((a, b) => b.ms - a.ms).slice(0, slowestShown)) {
      lines.push(`${seconds(ms)}  ${project.padEnd(8)} ${file}`);
    }
    console.log(lines.join("\n"));
  }
}
