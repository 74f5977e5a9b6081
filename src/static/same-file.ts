/*
 * "Is this still the same file": the one place that says what a change of a file's stats means, for
 * every cache and check of the static plugin. Two questions, two answers:
 * - `isSameFile` asks it of a path (the ETag cache, the small-file content cache): device and inode
 *   say which file, size and the modification and change times say its contents are those seen. Any
 *   write, truncation, rename over the path, chmod or touch moves the change time.
 * - `hasSameBytes` asks it of an open descriptor (the check after the last byte of a response, the
 *   bytes read whole, the hash of a file): were the bytes read through it those its stats describe?
 *   Renaming another file over the path, unlinking or linking the file moves its change time and its
 *   link count, yet the inode keeps its bytes, and a descriptor open on it reads them whole: that is
 *   the path changing, not the file. Everything else that moves the change time (a write whose
 *   modification time was set back afterwards, as `cp -p` does in place) still counts as a change.
 */

/** What a `stat` said about a file, kept to compare with a later one. */
export interface FileIdentity {
    readonly dev: number;
    readonly ino: number;
    readonly size: number;
    readonly mtimeMs: number;
    readonly ctimeMs: number;
    /** The number of names the file has: it drops to 0 when another file is renamed over its last one. */
    readonly nlink: number;
}

/** The identity fields of `stats`, copied so that keeping them does not keep the Stats object. */
export function identityOf(stats: FileIdentity): FileIdentity {
    const { dev, ino, size, mtimeMs, ctimeMs, nlink } = stats;
    return { dev, ino, size, mtimeMs, ctimeMs, nlink };
}

/** True when `now`, a stat of a path, describes the same file with the same contents and metadata as `before`. */
export function isSameFile(before: FileIdentity, now: FileIdentity): boolean {
    return hasSameBytes(before, now) && now.ctimeMs === before.ctimeMs;
}

/**
 * True when `now`, a stat of the descriptor `before` was taken from, shows the same bytes: same inode,
 * size and modification time, and a change time that moved only with the number of names (renamed
 * over, unlinked, linked: the path changed, not the bytes).
 */
export function hasSameBytes(before: FileIdentity, now: FileIdentity): boolean {
    return (
        now.ino === before.ino &&
        now.dev === before.dev &&
        now.size === before.size &&
        now.mtimeMs === before.mtimeMs &&
        (now.ctimeMs === before.ctimeMs || now.nlink !== before.nlink)
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
