// A result an operation already holds as JSON text, made off the event loop (the optimised day's
// proposal, made on the planner's thread): the HTTP transport sends the text as it is, rather than
// parsing it into objects only to serialise them again. Anything else that needs the value (the agents'
// transports, the response check, JSON.stringify through toJSON) reads it from the text.

export class JsonResult<T> {
  constructor(readonly json: string) {}

  value(): T {
    return JSON.parse(this.json) as T;
  }

  toJSON(): T {
    return this.value();
  }
}

/** The result as a value: a JsonResult's read from its text. */
export function resultValue(result: unknown): unknown {
  return result instanceof JsonResult ? result.value() : result;
}
