import { BoundedMemo } from '../../common/bounded-memo.js';

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const time = String.raw`(\d\d):(\d\d):(\d\d)`;
// RFC 9110 5.6.7: IMF-fixdate, and the two obsolete forms a recipient must still accept.
const imfFixdate = new RegExp(
    String.raw`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) ([A-Z][a-z]{2}) (\d{4}) ${time} GMT$`
);
const rfc850 = new RegExp(
    String.raw`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d\d)-([A-Z][a-z]{2})-(\d\d) ${time} GMT$`
);
const asctime = new RegExp(String.raw`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) ${time} (\d{4})$`);

/**
 * Epoch ms of an HTTP-date (RFC 9110 5.6.7), or undefined for anything else: `Date.parse` accepts
 * far more than the grammar, and a cache must not find freshness in a malformed date.
 */
export function parseHttpDate(value: string | undefined): number | undefined {
    if (value === undefined) {
        return undefined;
    }

    // A date read before (every response of a second has the same Date): its value, not the grammar again.
    const known = parsedDates.get(value);
    if (known !== undefined) {
        return known;
    }

    const parsed = parseDate(value);
    if (parsed !== undefined) {
        parsedDates.set(value, parsed);
    }

    return parsed;
}

// Bounded: the values come from servers (bounded-memo.ts); only dates that parse are kept.
const parsedDates = new BoundedMemo<string, number>(1000);

function parseDate(value: string): number | undefined {
    let match = imfFixdate.exec(value);
    if (match !== null) {
        return utc(match[3]!, match[2]!, match[1]!, match[4]!, match[5]!, match[6]!);
    }

    match = rfc850.exec(value);
    if (match !== null) {
        // Two-digit years: RFC 9110 says one more than 50 years in the future is in the past century.
        const year = Number(match[3]) + 2000 > new Date().getUTCFullYear() + 50 ? 1900 : 2000;
        return utc(String(Number(match[3]) + year), match[2]!, match[1]!, match[4]!, match[5]!, match[6]!);
    }

    match = asctime.exec(value);
    if (match !== null) {
        return utc(match[6]!, match[1]!, match[2]!.trim(), match[3]!, match[4]!, match[5]!);
    }

    return undefined;
}

function utc(year: string, month: string, day: string, hours: string, minutes: string, seconds: string) {
    const index = months.indexOf(month);
    if (index === -1) {
        return undefined;
    }

    return Date.UTC(Number(year), index, Number(day), Number(hours), Number(minutes), Number(seconds));
}
