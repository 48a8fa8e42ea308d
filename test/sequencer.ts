// The order test files start in: vitest's own (each project's files together; with no record of an
// earlier run, as on CI's clean clone, the largest files first), except that the files known to run
// longest start first in their project. Started late, one of them ran alone for minutes at the end of a
// run on two workers (test/http/security.test.ts is a small file that runs 1,400 tests).

import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The longest-running files, longest first (seconds on a quiet machine, in a run of the whole suite). */
const LONGEST = [
  "test/cli.test.ts", // 500 s
  "test/http/security.test.ts", // 340 s on PostgreSQL, 130 s on SQLite
  "test/multiprocess.test.ts", // 315 s
  "test/races.test.ts", // 165 s
  "test/console/console-browser.test.ts", // 150 s
  "test/docs/examples.test.ts", // 145 s
  "test/storage/command-runner.property.test.ts", // 95 s
];

function rank(file: TestSpecification): number {
  const i = LONGEST.findIndex((path) => file.moduleId.endsWith(path));
  return i < 0 ? LONGEST.length : i;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const byProject = new Map<string, TestSpecification[]>();
    for (const file of sorted) {
      const group = byProject.get(file.project.name) ?? [];
      group.push(file);
      byProject.set(file.project.name, group);
    }
    // Array.prototype.sort is stable: vitest's order holds among files of one rank.
    return [...byProject.values()].flatMap((group) => group.sort((a, b) => rank(a) - rank(b)));
  }
}
