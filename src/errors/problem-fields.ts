import { describe } from './describe.js';
import { isUnsafeMember, standardMembers } from './problem-members.js';
import type { HttpErrorFactoryOptions, ProblemFields } from './types.js';
import { isUriReference } from './uri-reference.js';

/** The problem fields an error was given, checked: what `toProblem()` reads back. */
export interface CheckedProblemFields {
    readonly type?: string;
    readonly title?: string;
    readonly detail?: string;
    readonly instance?: string;
    readonly extensions?: Readonly<Record<string, unknown>>;
}

/** Where an error keeps its problem fields: a symbol key stays out of its keys and its JSON. */
const problemFieldsKey = Symbol('tracewire.problemFields');

/** How deep an extension value may nest: deeper is taken for a cycle, which JSON cannot carry. */
const maxExtensionDepth = 32;

/** The problem fields of an error, also through the prototype chain (the plugin answers with an object made from the error). */
export function problemFieldsOf(error: object): CheckedProblemFields | undefined {
    return (error as { [problemFieldsKey]?: CheckedProblemFields })[problemFieldsKey];
}

/**
 * The problem fields among `options`, checked, or undefined when none is set. Checked before the
 * error is touched, so a refused one is left as it was.
 */
export function checkProblemFields(options: ProblemFields): CheckedProblemFields | undefined {
    const { type, title, detail, instance, extensions } = options;
    if (type == null && title == null && detail == null && instance == null && extensions == null) {
        return undefined;
    }

    const fields: { -readonly [K in keyof CheckedProblemFields]: CheckedProblemFields[K] } = {};
    if (type != null) {
        fields.type = checkUriReference(type, 'type', 'https://example.com/probs/out-of-credit');
    }

    if (title != null) {
        fields.title = checkString(title, 'title');
    }

    if (detail != null) {
        fields.detail = checkString(detail, 'detail');
    }

    if (instance != null) {
        fields.instance = checkUriReference(instance, 'instance', '/accounts/12345/msgs/abc');
    }

    if (extensions != null) {
        fields.extensions = checkExtensions(extensions);
    }

    return fields;
}

/** Records `fields` on `error`, each over the one it had: re-decorating an error can add to its problem. */
export function recordProblemFields(error: Error, fields: CheckedProblemFields | undefined): void {
    if (fields !== undefined) {
        const holder = error as { [problemFieldsKey]?: CheckedProblemFields };
        holder[problemFieldsKey] = { ...problemFieldsOf(error), ...fields };
    }
}

/**
 * The `cause` option, refused where no new error is made: the Error handed over is decorated in
 * place, and ES2022 gives an error its cause when it is made, not afterwards.
 */
export function assertNoCause(options: HttpErrorFactoryOptions | undefined): void {
    if (options?.cause != null) {
        throw new TypeError(
            'HttpError option cause applies to a new error only: the Error given is decorated in place and keeps its own cause'
        );
    }
}

function checkString(value: unknown, name: string): string {
    if (typeof value !== 'string') {
        throw new TypeError(`HttpError option ${name} must be a string, got ${describe(value)}`);
    }

    return value;
}

function checkUriReference(value: unknown, name: string, example: string): string {
    if (typeof value !== 'string' || !isUriReference(value)) {
        throw new TypeError(
            `HttpError option ${name} must be a URI reference such as ${example}, got ${describe(value)}`
        );
    }

    return value;
}

function checkExtensions(extensions: unknown): Readonly<Record<string, unknown>> {
    const prototype = typeof extensions === 'object' && extensions !== null && Object.getPrototypeOf(extensions);
    if (prototype !== Object.prototype && prototype !== null) {
        throw new TypeError(
            `HttpError option extensions must be a plain object of members, got ${describe(extensions)}`
        );
    }

    const members = extensions as Record<string, unknown>;
    for (const name of Object.keys(members)) {
        if (standardMembers.has(name)) {
            throw new TypeError(
                `HttpError option extensions cannot hold ${name}: it is a member of RFC 9457 itself, give it as the option ${name}`
            );
        }

        if (isUnsafeMember(name)) {
            throw new TypeError(
                `HttpError option extensions cannot hold a member named ${name}: a client that merges the document into an object of its own would change that object's prototype through it`
            );
        }

        assertJsonValue(members[name], `extensions.${name}`, 1);
    }

    return { ...members };
}

/** Refuses what the response's JSON could not carry, now rather than when the response is sent. */
function assertJsonValue(value: unknown, path: string, depth: number): void {
    switch (typeof value) {
        case 'string':
        case 'boolean':
        case 'undefined':
            return;
        case 'number':
            if (Number.isFinite(value)) {
                return;
            }

            break;
        case 'object': {
            if (value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
                return;
            }

            if (depth > maxExtensionDepth) {
                throw new TypeError(
                    `HttpError option ${path} nests deeper than ${maxExtensionDepth} levels (a cycle?), which JSON cannot carry`
                );
            }

            const entries: [string, unknown][] = Array.isArray(value)
                ? value.map((item, index) => [`[${index}]`, item])
                : Object.entries(value).map(([key, item]) => [`.${key}`, item]);
            for (const [step, item] of entries) {
                assertJsonValue(item, `${path}${step}`, depth + 1);
            }

            return;
        }
    }

    throw new TypeError(`HttpError option ${path} is ${describe(value)}, which JSON cannot carry`);
}
