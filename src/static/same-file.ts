/*
 * "Is this still the same file": the one test behind every cache and check of the static plugin
 * (the ETag cache, the small-file content cache, the tag hashed while a file streams, the check
 * after the last byte of a response). Device and inode say which file; size and the modification
 * and change times say its contents are those seen. Any write, truncation, rename over the path,
 * chmod or touch moves the change time.
 */

/** What a `stat` said about a file, kept to compare with a later one. */
export interface FileIdentity {
    readonly dev: number;
    readonly ino: number;
    readonly size: number;
    readonly mtimeMs: number;
    readonly ctimeMs: number;
}

/** The identity fields of `stats`, copied so that keeping them does not keep the Stats object. */
export function identityOf(stats: FileIdentity): FileIdentity {
    const { dev, ino, size, mtimeMs, ctimeMs } = stats;
    return { dev, ino, size, mtimeMs, ctimeMs };
}

/** True when `now` describes the same file with the same contents as `before`. */
export function isSameFile(before: FileIdentity, now: FileIdentity): boolean {
    return (
        now.ino === before.ino &&
        now.dev === before.dev &&
        now.size === before.size &&
        now.mtimeMs === before.mtimeMs &&
        now.ctimeMs === before.ctimeMs
    );
}

/**
 * The identity as a string, equal for two stats exactly when `isSameFile` holds (the times in hex keep
 * their fraction). Safe in an entity tag: hex digits, `.` and `-` only.
 */
export function identityKey(stats: FileIdentity): string {
    const { dev, ino, size, mtimeMs, ctimeMs } = stats;
    return `${size.toString(16)}-${mtimeMs.toString(16)}-${ctimeMs.toString(16)}-${ino.toString(16)}-${dev.toString(16)}`;
}
