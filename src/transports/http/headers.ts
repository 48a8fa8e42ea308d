// A request header as one value: Node gives a repeated header as a list, and the service reads its first.

export const firstHeader = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;
