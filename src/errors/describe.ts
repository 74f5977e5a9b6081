/** A short description of an unexpected value for error messages: its type and, for primitives, the value. */
export function describe(value: unknown): string {
    if (value === null) {
        return 'null';
    }

    if (typeof value === 'string') {
        return `string ${JSON.stringify(value)}`;
    }

    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
        return `${typeof value} ${String(value)}`;
    }

    if (typeof value === 'object') {
        return Array.isArray(value) ? 'an array' : `an object (${value.constructor?.name ?? 'no prototype'})`;
    }

    return typeof value;
}
