import type { HttpError } from '../../../../src/errors/index.js';

/**
 * The outcome of a promise that must settle, or a test failure naming it as pending after a generous
 * wait: every ending of an HTTP/2 exchange settles its promise.
 */
export async function settled<T>(promise: Promise<T>, ms = 5000): Promise<{ value?: T; err?: HttpError }> {
    let guard: NodeJS.Timeout | undefined;
    const pending = new Promise<never>((_, reject) => {
        guard = setTimeout(() => reject(new Error(`The promise is still pending after ${ms} ms`)), ms);
    });
    try {
        return { value: await Promise.race([promise, pending]) };
    } catch (err) {
        if (err instanceof Error && err.message.startsWith('The promise is still pending')) {
            throw err;
        }

        return { err: err as HttpError };
    } finally {
        clearTimeout(guard);
    }
}

/** The rejection of `promise`; a test failure when it resolves or stays pending. */
export async function rejection(promise: Promise<unknown>, ms = 5000): Promise<HttpError> {
    const { err } = await settled(promise, ms);
    if (err === undefined) {
        throw new Error('The promise resolved');
    }

    return err;
}

/** The code a failure's cause carries (`data.code`). */
export function codeOf(err: HttpError): string | undefined {
    return (err.data as { code?: string } | null)?.code;
}
