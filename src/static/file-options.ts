import type { DispositionMode } from './content-disposition.js';
import type { EtagMethod } from './etag.js';
import type { FileOptions } from './types.js';

/** The file options (README, "Static files") with defaults applied and values checked once. */
export interface FileSettings {
    confine: boolean | string;
    filename: string | null;
    mode: DispositionMode;
    lookupCompressed: boolean;
    /** `[encoding, extension]` pairs in the order they were given, which breaks ties between equal q-values. */
    lookupMap: ReadonlyArray<readonly [string, string]>;
    etagMethod: EtagMethod;
    start: number;
    end: number | null;
}

/** Checks the 2.7 options at the boundary, naming the offending one; `where` says which API received them. */
export function normalizeFileOptions(options: FileOptions | undefined, where: string): FileSettings {
    const given = options ?? {};
    assertOption(typeof given === 'object', `${where} options must be an object`);
    const {
        confine = true,
        filename,
        mode = false,
        lookupCompressed = false,
        lookupMap = { gzip: '.gz' },
        etagMethod = 'hash',
        start = 0,
        end
    } = given;
    assertOption(
        typeof confine === 'boolean' || (typeof confine === 'string' && confine !== ''),
        `${where} option "confine" must be a boolean or a directory path`
    );
    assertOption(
        filename === undefined || (typeof filename === 'string' && filename !== ''),
        `${where} option "filename" must be a non-empty string`
    );
    assertOption(
        mode === false || mode === 'attachment' || mode === 'inline',
        `${where} option "mode" must be false, "attachment" or "inline"`
    );
    assertOption(typeof lookupCompressed === 'boolean', `${where} option "lookupCompressed" must be a boolean`);
    assertOption(
        etagMethod === 'hash' || etagMethod === 'simple' || etagMethod === false,
        `${where} option "etagMethod" must be "hash", "simple" or false`
    );
    assertOption(Number.isSafeInteger(start) && start >= 0, `${where} option "start" must be a non-negative integer`);
    assertOption(
        end === undefined || (Number.isSafeInteger(end) && end >= start),
        `${where} option "end" must be an integer no smaller than "start"`
    );
    return {
        confine,
        filename: filename ?? null,
        mode,
        lookupCompressed,
        lookupMap: normalizeLookupMap(lookupMap, where),
        etagMethod,
        start,
        end: end ?? null
    };
}

export function normalizeLookupMap(lookupMap: unknown, where: string): Array<[string, string]> {
    assertOption(
        typeof lookupMap === 'object' && lookupMap !== null && !Array.isArray(lookupMap),
        `${where} option "lookupMap" must be an object mapping encodings to file extensions`
    );
    const pairs = Object.entries(lookupMap as Record<string, unknown>);
    for (const [encoding, extension] of pairs) {
        assertOption(
            typeof extension === 'string' && extension !== '',
            `${where} option "lookupMap.${encoding}" must be a non-empty file extension`
        );
    }

    return pairs.map(([encoding, extension]) => [encoding.toLowerCase(), extension as string]);
}

/** A configuration mistake is the developer's: a TypeError at registration, naming the option. */
export function assertOption(condition: boolean, message: string): asserts condition {
    if (!condition) {
        throw new TypeError(`static: ${message}`);
    }
}
