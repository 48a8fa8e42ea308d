// The one clock: every part of the service reads the time through a Clock it is given, so tests and the
// simulator can move time, and nothing reads the wall clock on its own.

export type Clock = () => Date;

/** The wall clock, handed out once by the composition (main.ts, the CLI, the test harness). */
export const systemClock: Clock = () => new Date();
