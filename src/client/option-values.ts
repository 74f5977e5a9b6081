/** True for a non-negative integer: a count, a size in bytes or a time in milliseconds. */
export function isCount(value: unknown): boolean {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
