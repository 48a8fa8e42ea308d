// Types of build-console.mjs, for the tests that import its decision.

export declare const STAMP: string;
export declare function consoleInputs(root: string): string[];
export declare function consoleInputsHash(root: string): string;
export declare function consoleBuildState(root: string): { stale: boolean; hash: string };
export declare function buildConsole(root: string, options?: { force?: boolean }): Promise<boolean>;
