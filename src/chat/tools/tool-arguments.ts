/** The arguments object of a tool call; the agent hands over whatever the model sent. */
export function toolArguments(args: unknown): Record<string, unknown> {
  if (typeof args === 'string') {
    try {
      return toolArguments(JSON.parse(args) as unknown);
    } catch {
      throw new Error('arguments are not valid JSON');
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new Error('arguments must be a JSON object');
  return args as Record<string, unknown>;
}

export function optionalString(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

export function requiredString(args: Record<string, unknown>, name: string): string {
  const value = optionalString(args, name);
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
}

export function optionalInteger(args: Record<string, unknown>, name: string): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer`);
  return value;
}
