/**
 * Content negotiation on the `accept` header (RFC 9110, section 12.5.1), for the two places that
 * choose between two representations of one answer: a directory listing (HTML or JSON) and an
 * error response (classic JSON or a problem document).
 */

/** A media type as `accept` names it: `type/subtype`, lower case. */
export interface MediaType {
    readonly type: string;
    readonly subtype: string;
}

// The specificity of a range that names the type itself (`type/subtype`).
const named = 2;

/**
 * How a tie of q-value and specificity between two ranges that each name their type is settled:
 * `'listed first'`, by the range that comes first; `'named'`, for `preferred` (RFC 9110 gives the order
 * of the ranges no meaning: a client that names both types at one q-value reads both).
 */
export type NamedTie = 'listed first' | 'named';

/**
 * True when `accept` ranks `preferred` above `other`: by q-value, then by how specifically a media
 * range names it (`type/subtype` over `type/*` over `*\/*`), then as `tie` says. False when the
 * client accepts neither, sent no `accept` at all, or is indifferent (one wildcard covers both).
 */
export function ranksAbove(
    accept: string | undefined,
    preferred: MediaType,
    other: MediaType,
    tie: NamedTie = 'listed first'
): boolean {
    if (!accept) {
        return false;
    }

    const first = rank(accept, preferred);
    const second = rank(accept, other);
    if (first.q !== second.q) {
        return first.q > second.q;
    }

    if (first.q === 0) {
        return false;
    }

    if (first.specificity !== second.specificity) {
        return first.specificity > second.specificity;
    }

    if (tie === 'named' && first.specificity === named) {
        return true;
    }

    return first.position < second.position;
}

interface Rank {
    q: number;
    specificity: number;
    position: number;
}

/** The q-value of the most specific range of `accept` that covers `media` (RFC 9110: it takes precedence). */
function rank(accept: string, media: MediaType): Rank {
    let best: Rank = { q: 0, specificity: -1, position: Number.POSITIVE_INFINITY };
    const ranges = accept.split(',');
    for (let position = 0; position < ranges.length; ++position) {
        const [range = '', ...params] = ranges[position]!.split(';');
        const [rangeType = '', rangeSubtype = ''] = range.trim().toLowerCase().split('/');
        let specificity: number;
        if (rangeType === media.type && rangeSubtype === media.subtype) {
            specificity = named;
        } else if (rangeType === media.type && rangeSubtype === '*') {
            specificity = 1;
        } else if (rangeType === '*' && rangeSubtype === '*') {
            specificity = 0;
        } else {
            continue;
        }

        if (specificity > best.specificity) {
            best = { q: qValue(params), specificity, position };
        }
    }

    return best;
}

function qValue(params: string[]): number {
    for (const param of params) {
        const [key = '', value = ''] = param.split('=');
        if (key.trim().toLowerCase() === 'q') {
            const q = Number(value.trim());
            return Number.isNaN(q) ? 0 : q;
        }
    }

    return 1;
}
