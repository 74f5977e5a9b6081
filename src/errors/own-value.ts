/**
 * The value of an own data property of `holder`, or undefined (also for a `holder` that is not an
 * object). An accessor is never called: reading what a peer or a caller handed over runs none of
 * its code.
 */
export function ownValue(holder: unknown, name: string): unknown {
    if (typeof holder !== 'object' || holder === null) {
        return undefined;
    }

    const descriptor = Object.getOwnPropertyDescriptor(holder, name);
    return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}
